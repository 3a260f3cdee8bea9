/* mkcorpus - generate a realistic photo tree for tests and benchmarks.
 *
 * Real JPEGs (libjpeg-turbo) with EXIF from a small set of camera profiles,
 * sizes drawn from a log-normal distribution around a chosen median, laid
 * out as YEAR/YEAR-MONTH/DATE EVENT/NAME.JPG, and created in shuffled order
 * so that directory order, inode order and physical order all differ.
 * Optionally some files are written interleaved (fragmented) and some are
 * deleted and rewritten at the end (churn), or the file system is aged
 * first (filled with filler files, a random part of them deleted) so that
 * the photos land in the holes, as on a drive filled and emptied for years.  Every file's content is a
 * function of (--seed, its index), so a tree can be regenerated exactly.
 * A manifest (JSON lines) records what each file holds, for tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <jpeglib.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

#include "common/strbuf.h"
#include "tools/mkcorpus/exifw.h"

static const char help[] =
	"usage: mkcorpus [--files N] [--median SIZE | --megapixels MP] [--sigma S] [--seed N]\n"
	"                [--fragment PCT] [--churn PCT] [--age SIZES [--age-keep PCT]]\n"
	"                [--manifest FILE] [--no-sync] DIR\n"
	"\n"
	"Create N (default 200) camera-like JPEG photos with EXIF below DIR.\n"
	"  --median SIZE    median file size (default 150k); sizes are log-normal\n"
	"  --sigma S        spread of the log-normal (default 0.5)\n"
	"  --seed N         seed (default 1); same seed, same tree\n"
	"  --fragment PCT   write PCT% of the files in interleaved pairs (fragmented)\n"
	"  --churn PCT      afterwards delete PCT% of the files and write them again\n"
	"  --age SIZES      first fill the file system holding DIR with filler files\n"
	"                   (sizes drawn from the comma-separated list, e.g. 64k,256k)\n"
	"                   in DIR.filler, then delete a random part of them, so the\n"
	"                   photos are written into the holes; reports the photos'\n"
	"                   extents per file (FIEMAP)\n"
	"  --age-keep PCT   share of the filler files kept (default 50)\n"
	"  --megapixels MP  fixed resolution instead (sizes then follow the content)\n"
	"  --manifest FILE  JSON lines describing every file (path relative to DIR)\n"
	"  --no-sync        do not sync at the end\n";

/* ---- randomness ---------------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

struct rng {
	uint64_t s;
};

static uint64_t next(struct rng *r)
{
	r->s += 0x9E3779B97F4A7C15ull;
	return mix64(r->s);
}

static double uniform(struct rng *r)
{
	return (double)(next(r) >> 11) / 9007199254740992.0;
}

static uint32_t below(struct rng *r, uint32_t n)
{
	return (uint32_t)(next(r) % n);
}

static double normal(struct rng *r)
{
	double u = uniform(r), v = uniform(r);
	if (u < 1e-12)
		u = 1e-12;
	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* ---- the world being photographed ---------------------------------------- */

struct camera {
	const char *make, *model, *lens;
	const char *prefix; /* file name: prefix, zero-padded counter, .JPG */
	int digits;
	int big_endian;
	int aspect_w, aspect_h;
	int quality;
};

static const struct camera cameras[] = {
	{"Canon", "Canon EOS 80D", "EF-S18-135mm f/3.5-5.6 IS USM", "IMG_", 4, 0, 3, 2, 92},
	{"NIKON CORPORATION", "NIKON D750", "24.0-120.0 mm f/4.0", "DSC_", 4, 1, 3, 2, 90},
	{"SONY", "ILCE-7M3", "FE 28-70mm F3.5-5.6 OSS", "DSC", 5, 0, 3, 2, 88},
	{"FUJIFILM", "X-T3", "XF18-55mmF2.8-4 R LM OIS", "DSCF", 4, 0, 3, 2, 90},
	{"Apple", "iPhone 12", "iPhone 12 back dual wide camera 4.2mm f/1.6", "IMG_", 4, 1, 4,
	 3, 85},
	{"Panasonic", "DC-GX9", "LUMIX G VARIO 12-32/F3.5-5.6", "P", 7, 0, 4, 3, 87},
	{"OLYMPUS CORPORATION", "E-M10MarkIII", "OLYMPUS M.12-42mm F3.5-5.6 II R", "P", 7, 0,
	 4, 3, 86},
};
#define NCAMERAS (sizeof(cameras) / sizeof(cameras[0]))

static const char *const event_names[] = {
	"Beach", "Birthday", "Hike", "Wedding", "Zoo", "Garden", "City Walk", "Snow Trip",
	"Concert", "Harbour", "Family Visit", "Market", "Road Trip", "Lake", "Museum", "Forest",
};
#define NEVENTNAMES (sizeof(event_names) / sizeof(event_names[0]))

static const uint32_t exposures[][2] = {{1, 30}, {1, 60}, {1, 125}, {1, 250}, {1, 500},
					{1, 1000}, {1, 2000}, {1, 4}, {2, 1}, {1, 15}};
static const uint32_t fnumbers[][2] = {{14, 10}, {18, 10}, {28, 10}, {40, 10}, {56, 10},
				       {80, 10}, {110, 10}, {160, 10}};
static const uint32_t isos[] = {100, 200, 400, 800, 1600, 3200, 6400};
static const uint32_t focals[][2] = {{18, 1}, {24, 1}, {35, 1}, {50, 1}, {85, 1}, {135, 1},
				     {42, 10}, {120, 1}};

struct event {
	int year, month, day, hour;
	const char *name;
	int camera;
	int has_gps;
	double lat, lon;
	int count, counter0;
};

struct photo {
	int event;
	int seq;          /* within the event */
	char rel[192];    /* path below DIR */
	uint64_t seed;
	double target;    /* bytes */
	int w, h;         /* chosen at first encoding, kept for rewrites */
};

/* ---- encoding ------------------------------------------------------------ */

struct image {
	int w, h;
	unsigned char *px;
};

/* dst (its size set) as the box-filtered src */
static void shrink(const struct image *src, struct image *dst)
{
	int x, y, k;
	for (y = 0; y < dst->h; y++) {
		int y0 = y * src->h / dst->h, y1 = (y + 1) * src->h / dst->h;
		for (x = 0; x < dst->w; x++) {
			int x0 = x * src->w / dst->w, x1 = (x + 1) * src->w / dst->w, xx, yy;
			double sum[3] = {0, 0, 0};
			long n = 0;
			if (y1 <= y0)
				y1 = y0 + 1;
			if (x1 <= x0)
				x1 = x0 + 1;
			for (yy = y0; yy < y1 && yy < src->h; yy++)
				for (xx = x0; xx < x1 && xx < src->w; xx++, n++)
					for (k = 0; k < 3; k++)
						sum[k] += src->px[((size_t)yy * (size_t)src->w + (size_t)xx) * 3 + (size_t)k];
			for (k = 0; k < 3; k++)
				dst->px[((size_t)y * (size_t)dst->w + (size_t)x) * 3 + (size_t)k] =
					(unsigned char)(n ? sum[k] / (double)n + 0.5 : 0);
		}
	}
}

/* A gradient sky, a few soft blobs and sensor-like noise: the noise level
 * decides how well it compresses, the rest keeps it from looking like TV
 * static. */
static int synth(struct image *im, int w, int h, double noise, struct rng *r)
{
	int x, y, k, nblobs = 3 + (int)below(r, 5);
	double c0[3], c1[3], bx[8], by[8], br[8], bc[8][3];
	uint64_t s = next(r);

	im->w = w;
	im->h = h;
	im->px = malloc((size_t)w * (size_t)h * 3);
	if (!im->px)
		return -1;
	for (k = 0; k < 3; k++) {
		c0[k] = 40 + uniform(r) * 200;
		c1[k] = 40 + uniform(r) * 200;
	}
	for (k = 0; k < nblobs; k++) {
		bx[k] = uniform(r) * w;
		by[k] = uniform(r) * h;
		br[k] = (0.05 + uniform(r) * 0.3) * (w < h ? w : h);
		bc[k][0] = uniform(r) * 255;
		bc[k][1] = uniform(r) * 255;
		bc[k][2] = uniform(r) * 255;
	}
	for (y = 0; y < h; y++) {
		double t = (double)y / (h > 1 ? h - 1 : 1);
		for (x = 0; x < w; x++) {
			unsigned char *p = im->px + ((size_t)y * (size_t)w + (size_t)x) * 3;
			double v[3];
			for (k = 0; k < 3; k++)
				v[k] = c0[k] * (1 - t) + c1[k] * t;
			for (k = 0; k < nblobs; k++) {
				double dx = x - bx[k], dy = y - by[k];
				if (dx * dx + dy * dy < br[k] * br[k]) {
					v[0] = (v[0] + bc[k][0]) * 0.5;
					v[1] = (v[1] + bc[k][1]) * 0.5;
					v[2] = (v[2] + bc[k][2]) * 0.5;
				}
			}
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			for (k = 0; k < 3; k++) {
				double n = ((double)((s >> (k * 16)) & 0xffff) / 65535.0 - 0.5) * noise;
				double q = v[k] + n;
				p[k] = (unsigned char)(q < 0 ? 0 : q > 255 ? 255 : q);
			}
		}
	}
	return 0;
}

/* Encode im; the APP1 payload (if any) goes right after SOI. */
static int encode(const struct image *im, int quality, const struct strbuf *app1,
		  unsigned char **out, unsigned long *outlen)
{
	struct jpeg_compress_struct c;
	struct jpeg_error_mgr jerr;
	JSAMPROW row;

	c.err = jpeg_std_error(&jerr);
	jpeg_create_compress(&c);
	*out = NULL;
	*outlen = 0;
	jpeg_mem_dest(&c, out, outlen);
	c.image_width = (JDIMENSION)im->w;
	c.image_height = (JDIMENSION)im->h;
	c.input_components = 3;
	c.in_color_space = JCS_RGB;
	jpeg_set_defaults(&c);
	jpeg_set_quality(&c, quality, TRUE);
	c.write_JFIF_header = app1 ? FALSE : TRUE;
	jpeg_start_compress(&c, TRUE);
	if (app1) {
		struct strbuf seg = STRBUF_INIT;
		sb_add(&seg, "Exif\0\0", 6);
		sb_add(&seg, app1->p, app1->len);
		jpeg_write_marker(&c, JPEG_APP0 + 1, (const JOCTET *)seg.p, (unsigned)seg.len);
		sb_free(&seg);
	}
	while (c.next_scanline < c.image_height) {
		row = im->px + (size_t)c.next_scanline * (size_t)im->w * 3;
		jpeg_write_scanlines(&c, &row, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	return 0;
}

/* With --megapixels: every photo has this many pixels. */
static double fixed_pixels;

/* Bytes per pixel observed so far, per noise level: steers the size. */
static double bpp[4] = {0.35, 0.5, 0.7, 0.9};
static const double noise_levels[4] = {20, 45, 80, 120};

static void to_dms(double v, uint32_t out[3][2])
{
	double a = fabs(v);
	uint32_t d = (uint32_t)a;
	double m = (a - d) * 60.0;
	uint32_t mi = (uint32_t)m;
	double s = (m - mi) * 60.0;
	out[0][0] = d;
	out[0][1] = 1;
	out[1][0] = mi;
	out[1][1] = 1;
	out[2][0] = (uint32_t)llround(s * 100.0);
	out[2][1] = 100;
}

static double from_dms(const uint32_t v[3][2])
{
	return (double)v[0][0] / v[0][1] + (double)v[1][0] / v[1][1] / 60.0 +
	       (double)v[2][0] / v[2][1] / 3600.0;
}

struct made {
	unsigned char *jpeg;
	unsigned long len;
	struct strbuf manifest;
};

/* Build photo i: the same (seed, i) always gives the same bytes. */
static int make_photo(struct photo *ph, const struct event *ev, struct made *m,
		      int want_manifest)
{
	const struct camera *cam = &cameras[ev->camera];
	struct rng r = {ph->seed};
	struct exifw_in in;
	struct image im = {0, 0, NULL}, th = {0, 0, NULL};
	struct strbuf app1 = STRBUF_INIT;
	unsigned char *thumb = NULL;
	unsigned long thumb_len = 0;
	char dt[32], dto[32];
	int level = (int)below(&r, 4), w, h, orient, tw, th_h;
	uint32_t ei = below(&r, sizeof(exposures) / sizeof(exposures[0]));
	uint32_t fi = below(&r, sizeof(fnumbers) / sizeof(fnumbers[0]));
	uint32_t ii = below(&r, sizeof(isos) / sizeof(isos[0]));
	uint32_t li = below(&r, sizeof(focals) / sizeof(focals[0]));
	double pixels, u = uniform(&r);
	int secs = ph->seq * 37 + (int)below(&r, 30);

	orient = u < 0.8 ? 1 : u < 0.9 ? 6 : u < 0.95 ? 8 : 3;
	if (ph->w) {
		w = ph->w;
		h = ph->h;
	} else {
		pixels = fixed_pixels > 0 ? fixed_pixels : ph->target / bpp[level];
		if (pixels < 4096)
			pixels = 4096;
		w = (int)sqrt(pixels * cam->aspect_w / cam->aspect_h);
		h = (int)(w * (double)cam->aspect_h / cam->aspect_w);
		w = (w + 15) & ~15;
		h = (h + 15) & ~15;
		ph->w = w;
		h = h ? h : 16;
		ph->h = h;
	}
	if (synth(&im, w, h, noise_levels[level], &r) != 0)
		return -1;
	tw = 160;
	th_h = 160 * cam->aspect_h / cam->aspect_w;
	/* synthesised only to draw from the generator as before (the trees
	 * stay the same byte for byte but for the thumbnails), then replaced
	 * by the picture itself made small, as a camera's thumbnail is */
	if (synth(&th, tw, th_h, 10, &r) != 0) {
		free(im.px);
		return -1;
	}
	shrink(&im, &th);
	encode(&th, 70, NULL, &thumb, &thumb_len);

	snprintf(dt, sizeof(dt), "%04d:%02d:%02d %02d:%02d:%02d", ev->year, ev->month, ev->day,
		 ev->hour + secs / 3600 % 10, secs / 60 % 60, secs % 60);
	memset(&in, 0, sizeof(in));
	in.big_endian = cam->big_endian;
	in.make = cam->make;
	in.model = cam->model;
	in.lens_model = cam->lens;
	in.software = "mkcorpus";
	in.datetime = dt;
	in.orientation = orient;
	in.exp_num = exposures[ei][0];
	in.exp_den = exposures[ei][1];
	in.fnum_num = fnumbers[fi][0];
	in.fnum_den = fnumbers[fi][1];
	in.focal_num = focals[li][0];
	in.focal_den = focals[li][1];
	in.iso = isos[ii];
	in.pixel_w = (uint32_t)w;
	in.pixel_h = (uint32_t)h;
	in.has_gps = ev->has_gps;
	if (ev->has_gps) {
		double lat = ev->lat + normal(&r) * 0.002, lon = ev->lon + normal(&r) * 0.002;
		to_dms(lat, in.lat);
		to_dms(lon, in.lon);
		in.lat_ref = lat < 0 ? 'S' : 'N';
		in.lon_ref = lon < 0 ? 'W' : 'E';
	}
	in.thumb = thumb;
	in.thumb_len = thumb_len;
	exifw_build(&in, &app1);
	encode(&im, cam->quality, &app1, &m->jpeg, &m->len);

	/* learn how this noise level compresses */
	bpp[level] = 0.8 * bpp[level] + 0.2 * ((double)m->len - (double)app1.len) / ((double)w * h);
	if (bpp[level] < 0.02)
		bpp[level] = 0.02;

	sb_reset(&m->manifest);
	if (want_manifest) {
		struct strbuf *o = &m->manifest;
		memcpy(dto, dt, 20);
		dto[4] = dto[7] = '-';
		dto[10] = 'T';
		sb_adds(o, "{\"path\":");
		sb_add_json(o, ph->rel, strlen(ph->rel));
		sb_addf(o, ",\"size\":%lu,\"format\":\"jpeg\",\"width\":%d,\"height\":%d", m->len, w, h);
		sb_adds(o, ",\"make\":");
		sb_add_json(o, cam->make, strlen(cam->make));
		sb_adds(o, ",\"model\":");
		sb_add_json(o, cam->model, strlen(cam->model));
		sb_addf(o, ",\"datetime_original\":\"%s\",\"orientation\":%d", dto, orient);
		if (ev->has_gps)
			sb_addf(o, ",\"gps_lat\":%.9f,\"gps_lon\":%.9f",
				in.lat_ref == 'S' ? -from_dms(in.lat) : from_dms(in.lat),
				in.lon_ref == 'W' ? -from_dms(in.lon) : from_dms(in.lon));
		else
			sb_adds(o, ",\"gps_lat\":null,\"gps_lon\":null");
		sb_addf(o, ",\"exposure_time\":%.9g,\"f_number\":%.9g,\"iso\":%u,\"focal_length\":%.9g",
			(double)in.exp_num / in.exp_den, (double)in.fnum_num / in.fnum_den, in.iso,
			(double)in.focal_num / in.focal_den);
		sb_adds(o, ",\"lens_model\":");
		sb_add_json(o, cam->lens, strlen(cam->lens));
		sb_adds(o, "}\n");
	}
	free(im.px);
	free(th.px);
	free(thumb);
	sb_free(&app1);
	return 0;
}

/* ---- files --------------------------------------------------------------- */

static int mkdirs(const char *path)
{
	char buf[4096];
	size_t i, n = strlen(path);
	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] == '/' || buf[i] == '\0') {
			char c = buf[i];
			buf[i] = '\0';
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				return -1;
			buf[i] = c;
		}
	}
	return 0;
}

static int open_for(const char *dir, const char *rel)
{
	char full[4096], parent[4096];
	const char *slash;

	snprintf(full, sizeof(full), "%s/%s", dir, rel);
	slash = strrchr(full, '/');
	memcpy(parent, full, (size_t)(slash - full));
	parent[slash - full] = '\0';
	if (mkdirs(parent) != 0)
		return -1;
	return open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void set_mtime(const char *dir, const struct photo *ph, const struct event *ev)
{
	char full[4096];
	struct tm tm;
	struct timespec ts[2];

	memset(&tm, 0, sizeof(tm));
	tm.tm_year = ev->year - 1900;
	tm.tm_mon = ev->month - 1;
	tm.tm_mday = ev->day;
	tm.tm_hour = ev->hour;
	tm.tm_min = ph->seq % 60;
	ts[0].tv_sec = ts[1].tv_sec = timegm(&tm);
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	snprintf(full, sizeof(full), "%s/%s", dir, ph->rel);
	utimensat(AT_FDCWD, full, ts, 0);
}

static void die(const char *what, const char *path)
{
	fprintf(stderr, "mkcorpus: %s '%s': %s\n", what, path, strerror(errno));
	exit(1);
}

/* Write a and b alternately in 32 KiB pieces, syncing after each so the
 * file system allocates them interleaved. */
static void write_pair(const char *dir, const struct photo *pa, const struct made *a,
		       const struct photo *pb, const struct made *b)
{
	const size_t piece = 32 * 1024;
	int fa = open_for(dir, pa->rel), fb = open_for(dir, pb->rel);
	size_t oa = 0, ob = 0;

	if (fa < 0)
		die("create", pa->rel);
	if (fb < 0)
		die("create", pb->rel);
	while (oa < a->len || ob < b->len) {
		size_t na = a->len - oa < piece ? a->len - oa : piece;
		size_t nb = b->len - ob < piece ? b->len - ob : piece;
		if (na && (write_all(fa, a->jpeg + oa, na) != 0 || fdatasync(fa) != 0))
			die("write", pa->rel);
		if (nb && (write_all(fb, b->jpeg + ob, nb) != 0 || fdatasync(fb) != 0))
			die("write", pb->rel);
		oa += na;
		ob += nb;
	}
	close(fa);
	close(fb);
}

static void write_one(const char *dir, const struct photo *ph, const struct made *m)
{
	int fd = open_for(dir, ph->rel);
	if (fd < 0)
		die("create", ph->rel);
	if (write_all(fd, m->jpeg, m->len) != 0 || close(fd) != 0)
		die("write", ph->rel);
}

static void shuffle(uint32_t *v, size_t n, struct rng *r)
{
	size_t i;
	for (i = n; i > 1; i--) {
		size_t j = below(r, (uint32_t)i);
		uint32_t t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

/* ---- aging ---------------------------------------------------------------- */

/* A drive that was filled and emptied for years has its free space in
 * holes between files that stayed.  Filler files, their sizes drawn from
 * `sizes`, fill the file system holding `fill` until little is left; a
 * random (100 - keep)% of them are deleted again.  The syncs matter: ext4
 * does not reuse blocks freed by a transaction that has not committed, so
 * without them the photos would go to the space behind the filler instead
 * of into its holes. */
struct age {
	double sizes[16];
	int nsizes, keep_pct;
	size_t made, kept;
};

static int fs_nearly_full(const char *path, uint64_t reserve)
{
	struct statvfs sv;
	if (statvfs(path, &sv) != 0)
		return 1;
	/* f_bfree, not f_bavail: root fills the blocks ext4 keeps for root
	 * too, or they would stay one unfragmented region for the photos */
	return (uint64_t)sv.f_bfree * sv.f_frsize < reserve;
}

static void age_fs(const char *fill, struct age *a, struct rng *r)
{
	unsigned char *buf;
	size_t cap = 0, i, n;
	struct statvfs sv;
	uint64_t reserve;
	int k;

	for (k = 0; k < a->nsizes; k++)
		if ((size_t)a->sizes[k] > cap)
			cap = (size_t)a->sizes[k];
	if (mkdirs(fill) != 0)
		die("create", fill);
	if (statvfs(fill, &sv) != 0)
		die("statvfs", fill);
	/* room for the file system's own metadata (btrfs cannot even delete
	 * on a full disk); 1% or 4 MiB, whichever is more: what is left
	 * stays in one piece, and photos that fit in it are not fragmented */
	reserve = (uint64_t)sv.f_blocks * sv.f_frsize / 100;
	if (reserve < 4u << 20)
		reserve = 4u << 20;
	buf = malloc(cap);
	if (!buf) {
		fprintf(stderr, "mkcorpus: out of memory\n");
		exit(1);
	}
	for (i = 0; i < cap; i++)
		buf[i] = (unsigned char)(i * 131 + 7);
	for (n = 0;; n++) {
		char rel[64];
		size_t len = (size_t)a->sizes[below(r, (uint32_t)a->nsizes)];
		int fd;
		if (n % 64 == 0 && fs_nearly_full(fill, reserve))
			break;
		snprintf(rel, sizeof(rel), "%04zu/%06zu", n / 1000, n);
		fd = open_for(fill, rel);
		if (fd < 0 && errno == ENOSPC)
			break;
		if (fd < 0)
			die("create", rel);
		if (write_all(fd, buf, len) != 0 || close(fd) != 0) {
			char full[4096];
			if (errno != ENOSPC)
				die("write", rel);
			snprintf(full, sizeof(full), "%s/%s", fill, rel);
			unlink(full);
			break;
		}
	}
	free(buf);
	sync();
	a->made = n;
	a->kept = 0;
	for (i = 0; i < n; i++) {
		char full[4096];
		if (below(r, 100) < (uint32_t)a->keep_pct) {
			a->kept++;
			continue;
		}
		snprintf(full, sizeof(full), "%s/%04zu/%06zu", fill, i / 1000, i);
		if (unlink(full) != 0)
			die("delete", full);
	}
	sync();
}

/* How many pieces a file lies in: FIEMAP's extents, those that continue
 * the previous one on disk counted with it (file systems split extents at
 * their own limits). */
static unsigned file_pieces(const char *path)
{
	enum { N = 256 };
	struct fiemap *fm = calloc(1, sizeof(*fm) + N * sizeof(struct fiemap_extent));
	uint64_t start = 0, end_phys = UINT64_MAX;
	unsigned pieces = 0, i, last = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!fm || fd < 0) {
		free(fm);
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (!last) {
		memset(fm, 0, sizeof(*fm));
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = N;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) != 0 || fm->fm_mapped_extents == 0)
			break;
		for (i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *x = &fm->fm_extents[i];
			if (x->fe_physical != end_phys)
				pieces++;
			end_phys = x->fe_physical + x->fe_length;
			start = x->fe_logical + x->fe_length;
			if (x->fe_flags & FIEMAP_EXTENT_LAST)
				last = 1;
		}
	}
	close(fd);
	free(fm);
	return pieces;
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return (x > y) - (x < y);
}

static void report_pieces(const char *dir, const struct photo *photos, size_t n)
{
	unsigned *p = calloc(n, sizeof(*p));
	size_t i, split = 0;
	double sum = 0;

	if (!p)
		return;
	for (i = 0; i < n; i++) {
		char full[4096];
		snprintf(full, sizeof(full), "%s/%s", dir, photos[i].rel);
		p[i] = file_pieces(full);
		sum += p[i];
		split += p[i] > 1;
	}
	qsort(p, n, sizeof(*p), cmp_unsigned);
	printf("mkcorpus: extents per photo: mean %.2f, median %u, max %u; %zu of %zu in more "
	       "than one\n",
	       sum / (double)n, p[n / 2], p[n - 1], split, n);
	free(p);
}

static int parse_size(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v <= 0)
		return -1;
	if (*end == 'k' || *end == 'K')
		v *= 1024, end++;
	else if (*end == 'm' || *end == 'M')
		v *= 1024 * 1024, end++;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

/* "64k,256k": filler sizes for --age */
static int parse_sizes(const char *list, struct age *a)
{
	char buf[256], *save = NULL, *tok;
	snprintf(buf, sizeof(buf), "%s", list);
	a->nsizes = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (a->nsizes == (int)(sizeof(a->sizes) / sizeof(a->sizes[0])) ||
		    parse_size(tok, &a->sizes[a->nsizes++]) != 0)
			return -1;
	return a->nsizes ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"files", required_argument, NULL, 'n'},
		{"median", required_argument, NULL, 'm'},
		{"sigma", required_argument, NULL, 's'},
		{"seed", required_argument, NULL, 'S'},
		{"fragment", required_argument, NULL, 'f'},
		{"churn", required_argument, NULL, 'c'},
		{"manifest", required_argument, NULL, 'M'},
		{"megapixels", required_argument, NULL, 'P'},
		{"no-sync", no_argument, NULL, 'N'},
		{"age", required_argument, NULL, 'A'},
		{"age-keep", required_argument, NULL, 'K'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	long nfiles = 200;
	double median = 150 * 1024, sigma = 0.5;
	uint64_t seed = 1;
	int frag_pct = 0, churn_pct = 0, do_sync = 1, c;
	const char *manifest_path = NULL, *dir;
	struct event *events;
	struct photo *photos;
	uint32_t *order, *churn;
	size_t nevents, i, e, nchurn = 0;
	struct rng r;
	FILE *manifest = NULL;
	uint64_t total = 0;
	struct made m = {NULL, 0, STRBUF_INIT}, m2 = {NULL, 0, STRBUF_INIT};
	struct age age = {{0}, 0, 50, 0, 0};
	char fill[2048];

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': nfiles = atol(optarg); break;
		case 'm':
			if (parse_size(optarg, &median) != 0) {
				fprintf(stderr, "mkcorpus: bad size '%s'\n", optarg);
				return 2;
			}
			break;
		case 's': sigma = atof(optarg); break;
		case 'S': seed = strtoull(optarg, NULL, 10); break;
		case 'f': frag_pct = atoi(optarg); break;
		case 'c': churn_pct = atoi(optarg); break;
		case 'M': manifest_path = optarg; break;
		case 'P': fixed_pixels = atof(optarg) * 1e6; break;
		case 'N': do_sync = 0; break;
		case 'A':
			if (parse_sizes(optarg, &age) != 0) {
				fprintf(stderr, "mkcorpus: bad sizes '%s'\n", optarg);
				return 2;
			}
			break;
		case 'K': age.keep_pct = atoi(optarg); break;
		case 'h': fputs(help, stdout); return 0;
		default: fputs(help, stderr); return 2;
		}
	}
	if (optind + 1 != argc || nfiles < 1 || nfiles > 10000000 || sigma < 0 || frag_pct < 0 ||
	    frag_pct > 100 || churn_pct < 0 || churn_pct > 100 || age.keep_pct < 0 ||
	    age.keep_pct > 100) {
		fputs(help, stderr);
		return 2;
	}
	dir = argv[optind];
	if (mkdirs(dir) != 0)
		die("create", dir);
	if (manifest_path && !(manifest = fopen(manifest_path, "w")))
		die("create", manifest_path);

	r.s = seed;
	nevents = (size_t)(nfiles / 40 + 1);
	events = calloc(nevents, sizeof(*events));
	photos = calloc((size_t)nfiles, sizeof(*photos));
	order = calloc((size_t)nfiles, sizeof(*order));
	churn = calloc((size_t)nfiles, sizeof(*churn));
	if (!events || !photos || !order || !churn) {
		fprintf(stderr, "mkcorpus: out of memory\n");
		return 1;
	}
	for (e = 0; e < nevents; e++) {
		struct event *ev = &events[e];
		ev->year = 2012 + (int)below(&r, 13);
		ev->month = 1 + (int)below(&r, 12);
		ev->day = 1 + (int)below(&r, 28);
		ev->hour = 8 + (int)below(&r, 6);
		ev->name = event_names[below(&r, NEVENTNAMES)];
		ev->camera = (int)below(&r, NCAMERAS);
		ev->has_gps = uniform(&r) < 0.7;
		ev->lat = -60 + uniform(&r) * 130;
		ev->lon = -170 + uniform(&r) * 340;
		ev->counter0 = 1 + (int)below(&r, 8000);
	}
	for (i = 0; i < (size_t)nfiles; i++) {
		struct photo *ph = &photos[i];
		const struct event *ev;
		const struct camera *cam;
		char name[64];
		ph->event = (int)below(&r, (uint32_t)nevents);
		ev = &events[ph->event];
		ph->seq = events[ph->event].count++;
		cam = &cameras[ev->camera];
		snprintf(name, sizeof(name), "%s%0*d.JPG", cam->prefix, cam->digits,
			 (ev->counter0 + ph->seq) % (cam->digits >= 7 ? 10000000 : cam->digits == 5 ? 100000 : 10000));
		snprintf(ph->rel, sizeof(ph->rel), "%04d/%04d-%02d/%04d-%02d-%02d %s/%s", ev->year,
			 ev->year, ev->month, ev->year, ev->month, ev->day, ev->name, name);
		ph->seed = mix64(seed * 0x100000001B3ull + i + 1);
		ph->target = median * exp(sigma * normal(&r));
		if (ph->target < median / 8)
			ph->target = median / 8;
		if (ph->target > median * 8)
			ph->target = median * 8;
		order[i] = (uint32_t)i;
	}
	/* two events on one day with the same camera could name a file twice */
	for (i = 0; i < (size_t)nfiles; i++) {
		size_t j;
		for (j = i + 1; j < (size_t)nfiles && j < i + 64; j++)
			if (strcmp(photos[i].rel, photos[j].rel) == 0)
				strncat(photos[j].rel, "-2.JPG", sizeof(photos[j].rel) - strlen(photos[j].rel) - 1);
	}
	shuffle(order, (size_t)nfiles, &r);
	if (age.nsizes) {
		/* its own stream, so that aging does not change the photos */
		struct rng ar = {mix64(seed ^ 0xA9EDull)};
		size_t n = strlen(dir);
		while (n > 1 && dir[n - 1] == '/')
			n--;
		snprintf(fill, sizeof(fill), "%.*s.filler", (int)n, dir);
		age_fs(fill, &age, &ar);
		printf("mkcorpus: aged: %zu filler files in %s, %zu kept\n", age.made, fill, age.kept);
	}

	for (i = 0; i < (size_t)nfiles; i++) {
		struct photo *ph = &photos[order[i]];
		int pair = frag_pct && i + 1 < (size_t)nfiles && below(&r, 100) < (uint32_t)frag_pct;
		if (make_photo(ph, &events[ph->event], &m, manifest != NULL) != 0) {
			fprintf(stderr, "mkcorpus: out of memory\n");
			return 1;
		}
		if (pair) {
			struct photo *pb = &photos[order[i + 1]];
			if (make_photo(pb, &events[pb->event], &m2, manifest != NULL) != 0) {
				fprintf(stderr, "mkcorpus: out of memory\n");
				return 1;
			}
			write_pair(dir, ph, &m, pb, &m2);
			set_mtime(dir, ph, &events[ph->event]);
			set_mtime(dir, pb, &events[pb->event]);
			total += m.len + m2.len;
			if (manifest)
				fputs(m.manifest.p, manifest), fputs(m2.manifest.p, manifest);
			free(m2.jpeg);
			m2.jpeg = NULL;
			i++;
		} else {
			write_one(dir, ph, &m);
			set_mtime(dir, ph, &events[ph->event]);
			total += m.len;
			if (manifest)
				fputs(m.manifest.p, manifest);
		}
		free(m.jpeg);
		m.jpeg = NULL;
	}
	if (churn_pct) {
		for (i = 0; i < (size_t)nfiles; i++)
			if (below(&r, 100) < (uint32_t)churn_pct)
				churn[nchurn++] = (uint32_t)i;
		for (i = 0; i < nchurn; i++) {
			char full[4096];
			snprintf(full, sizeof(full), "%s/%s", dir, photos[churn[i]].rel);
			unlink(full);
		}
		shuffle(churn, nchurn, &r);
		for (i = 0; i < nchurn; i++) {
			struct photo *ph = &photos[churn[i]];
			/* same seed: the same bytes as before, written somewhere else */
			make_photo(ph, &events[ph->event], &m, 0);
			write_one(dir, ph, &m);
			set_mtime(dir, ph, &events[ph->event]);
			free(m.jpeg);
			m.jpeg = NULL;
		}
	}
	if (manifest && fclose(manifest) != 0)
		die("write", manifest_path);
	if (do_sync || age.nsizes)
		sync();
	if (age.nsizes)
		report_pieces(dir, photos, (size_t)nfiles);
	printf("mkcorpus: %ld files, %.1f MB in %zu events below %s\n", nfiles, (double)total / 1e6,
	       nevents, dir);
	free(events);
	free(photos);
	free(order);
	free(churn);
	sb_free(&m.manifest);
	sb_free(&m2.manifest);
	return 0;
}
