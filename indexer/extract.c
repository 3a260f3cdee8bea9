#include "indexer/extract.h"
#include "indexer/eip.h"
#include "indexer/heif.h"
#include "indexer/iptc.h"
#include "indexer/qt.h"
#include "indexer/raster.h"
#include "indexer/x3f.h"
#include "indexer/xmp.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "indexer/cursor.h"
#include "indexer/desc.h"
#include "indexer/exif.h"
#include "indexer/parsers.h"

/* An XMP sidecar (or any XMP file): its packet wrapper or root element,
 * after a byte order mark, white space, and an XML declaration.  Only
 * UTF-8 (sidecars are; UTF-16 XMP lives inside images). */
static int is_xmp(const uint8_t *p, size_t n)
{
	static const char *const roots[] = {"<?xpacket", "<x:xmpmeta", "<x:xapmeta", "<rdf:RDF"};
	size_t i = 0, k, end = n < 4096 ? n : 4096;

	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	for (;;) {
		while (i < end && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
			i++;
		if (i + 5 < end && memcmp(p + i, "<?xml", 5) == 0) {
			const uint8_t *q = memchr(p + i, '>', end - i);
			if (!q)
				return 0;
			i = (size_t)(q - p) + 1;
			continue;
		}
		if (i + 5 < end && memcmp(p + i, "<!--", 4) == 0) {
			/* a comment before the root (darktable writes none, some do) */
			for (k = i + 4; k + 3 <= end && memcmp(p + k, "-->", 3) != 0; k++)
				;
			if (k + 3 > end)
				return 0;
			i = k + 3;
			continue;
		}
		break;
	}
	for (k = 0; k < sizeof(roots) / sizeof(roots[0]); k++)
		if (end - i >= strlen(roots[k]) && memcmp(p + i, roots[k], strlen(roots[k])) == 0)
			return 1;
	return 0;
}

const char *x_sniff(const uint8_t *p, size_t n)
{
	struct bc c = bc_make(p, n, 0);
	const char *b;

	if (bc_is(&c, 0, "\xff\xd8\xff", 3))
		return "jpeg";
	if (bc_is(&c, 0, "\xff\x01" "Exiv2", 7))
		return "exv";
	if (bc_is(&c, 0, "\x89PNG\r\n\x1a\n", 8))
		return "png";
	if (bc_is(&c, 0, "GIF87a", 6) || bc_is(&c, 0, "GIF89a", 6))
		return "gif";
	if (bc_is(&c, 0, "RIFF", 4) && bc_is(&c, 8, "WEBP", 4))
		return "webp";
	if (bc_is(&c, 0, "RIFF", 4) && bc_is(&c, 8, "AVI ", 4))
		return "avi";
	/* TIFF, BigTIFF, ORF ("RO"/"RS"), RW2 (0x55): tiff_parse names them */
	if (bc_is(&c, 0, "II*\0", 4) || bc_is(&c, 0, "MM\0*", 4) || bc_is(&c, 0, "II+\0", 4) ||
	    bc_is(&c, 0, "MM\0+", 4) || bc_is(&c, 0, "IIRO", 4) || bc_is(&c, 0, "IIRS", 4) ||
	    bc_is(&c, 0, "MMOR", 4) || bc_is(&c, 0, "IIU\0", 4))
		return "tiff";
	if (bc_is(&c, 0, "FUJIFILM", 8)) /* exiftool's RAF mark; the rest may be damaged */
		return "raf";
	if (bc_is(&c, 0, "II\x1a\0\0\0HEAPCCDR", 14))
		return "crw";
	if (bc_is(&c, 0, "\0MRM", 4))
		return "mrw";
	if (bc_is(&c, 0, "\0\0\0\x0cjP  \r\n\x87\n", 12))
		return "jp2";
	if (bc_is(&c, 0, "8BPS", 4))
		return "psd";
	if (bc_is(&c, 0, "FOVb", 4))
		return "x3f";
	if (bc_is(&c, 0, "PK\3\4", 4))
		return "zip"; /* or "eip", once its members are walked (eip.h) */
	if (bc_is(&c, 0, "BM", 2) && n >= 26)
		return "bmp";
	b = bmff_brand(p, n);
	if (b)
		return b;
	if (qt_sniff(p, n))
		return "mov";
	if (is_xmp(p, n))
		return "xmp";
	return "";
}

/* BMP: BITMAPINFOHEADER width and height (negative height: top-down rows). */
static int bmp_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 0);
	uint32_t hdr, w, h;
	uint16_t w16, h16;

	if (bc_le32(&c, 14, &hdr))
		return SL_FAIL(err, SL_E_CORRUPT, 0, "bmp: truncated header");
	if (hdr == 12) { /* OS/2 BITMAPCOREHEADER */
		if (bc_le16(&c, 18, &w16) || bc_le16(&c, 20, &h16))
			return SL_FAIL(err, SL_E_CORRUPT, 0, "bmp: truncated header");
		w = w16, h = h16;
	} else if (bc_le32(&c, 18, &w) || bc_le32(&c, 22, &h)) {
		return SL_FAIL(err, SL_E_CORRUPT, 0, "bmp: truncated header");
	}
	m->width = (uint32_t)((int32_t)w < 0 ? -(int64_t)(int32_t)w : (int32_t)w);
	m->height = (uint32_t)((int32_t)h < 0 ? -(int64_t)(int32_t)h : (int32_t)h);
	m->have |= XM_DIMS;
	return SL_OK;
}

/* PSD and PSB: the header's size (height before width, big-endian), then
 * past the color mode data, the image resources (iptc.h: IPTC, XMP and
 * the EXIF block Photoshop keeps in resource 0x0422). */
static int psd_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 1);
	uint32_t w, h, mode_len, res_len;
	size_t res;

	if (bc_be32(&c, 14, &h) || bc_be32(&c, 18, &w))
		return SL_FAIL(err, SL_E_CORRUPT, 0, "psd: truncated header");
	m->width = w;
	m->height = h;
	m->have |= XM_DIMS;
	if (bc_be32(&c, 26, &mode_len) || (uint64_t)mode_len + 34 > n ||
	    bc_be32(&c, 30 + (size_t)mode_len, &res_len)) {
		x_warn(m, "psd: no image resources in the bytes read");
		return SL_OK;
	}
	res = 34 + (size_t)mode_len;
	if (res_len > n - res) {
		x_warn(m, "psd: image resources cut short");
		res_len = (uint32_t)(n - res);
	}
	iptc_psir(p + res, res_len, m);
	return SL_OK;
}

/* An XMP file: a sidecar's values, which win over the image's own
 * (desc.h).  A file streamed past its first chunk (sidecars are small) is
 * read as far as that chunk goes, with the parser's warning. */
static int xmp_file_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	(void)err;
	if (xmp_parse(p, n, m, DS_SIDECAR) == SL_E_NOMEM)
		m->desc_oom = 1;
	return SL_OK;
}

typedef int (*parse_fn)(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);

static const struct {
	const char *family;
	parse_fn parse;
} parsers[] = {
	{"jpeg", jpg_parse}, {"exv", jpg_parse}, {"png", png_parse},   {"gif", gif_parse},
	{"webp", webp_parse}, {"tiff", tiff_parse}, {"raf", raf_parse}, {"crw", crw_parse},
	{"mrw", mrw_parse},  {"jp2", jp2_parse},   {"bmp", bmp_parse}, {"heic", bmff_parse},
	{"heif", bmff_parse}, {"avif", bmff_parse}, {"cr3", bmff_parse}, {"mp4", bmff_parse},
	{"mov", bmff_parse}, {"3gp", bmff_parse}, {"3g2", bmff_parse}, {"m4v", bmff_parse},
	{"avi", avi_parse},  {"psd", psd_parse}, {"xmp", xmp_file_parse},
	{"x3f", x3f_parse},  {"zip", zip_parse},
};

void x_warn(struct x_meta *m, const char *fmt, ...)
{
	size_t len = strlen(m->warnings);
	va_list ap;

	if (len + 4 >= sizeof(m->warnings))
		return;
	if (len) {
		memcpy(m->warnings + len, "; ", 2);
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(m->warnings + len, sizeof(m->warnings) - len, fmt, ap);
	va_end(ap);
	/* vsnprintf may cut a multi-byte character at the end */
	len = strlen(m->warnings);
	while (len && (unsigned char)m->warnings[len - 1] >= 0x80 && len + 1 >= sizeof(m->warnings))
		m->warnings[--len] = '\0';
}

void x_copy_text(char *dst, size_t cap, const uint8_t *s, size_t n)
{
	size_t i = 0, o = 0;

	if (cap == 0)
		return;
	while (i < n && s[i] != 0) {
		unsigned char ch = s[i];
		size_t need, k;
		if (ch < 0x20 || ch == 0x7f) {
			i++;
			continue;
		}
		if (ch < 0x80) {
			if (o + 1 >= cap)
				break;
			dst[o++] = (char)ch;
			i++;
			continue;
		}
		/* a valid UTF-8 sequence is kept whole */
		need = ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : ch >= 0xc2 ? 2 : 0;
		for (k = 1; need && k < need; k++)
			if (i + k >= n || (s[i + k] & 0xc0) != 0x80)
				need = 0;
		if (need == 4 && (ch > 0xf4 || (ch == 0xf0 && s[i + 1] < 0x90) ||
				  (ch == 0xf4 && s[i + 1] >= 0x90)))
			need = 0;
		if (need == 3 && ((ch == 0xe0 && s[i + 1] < 0xa0) || (ch == 0xed && s[i + 1] >= 0xa0)))
			need = 0;
		if (need) {
			if (o + need >= cap)
				break;
			memcpy(dst + o, s + i, need);
			o += need;
			i += need;
			continue;
		}
		/* a byte we cannot decode: the encoding is unknown, say so */
		if (o + 1 >= cap)
			break;
		dst[o++] = '?';
		i++;
	}
	while (o > 0 && dst[o - 1] == ' ')
		o--;
	dst[o] = '\0';
}

/* A motion photo's movie is the file's last embedded_video bytes: one
 * that cannot fit is no movie, and in a file held whole it must begin as
 * an ISO media file does (a box whose type is ftyp). */
static void check_embedded(const uint8_t *p, size_t n, uint64_t file_size, struct x_meta *m)
{
	uint64_t len = m->embedded_video;

	if (len >= file_size || len < 8) {
		x_warn(m, "motion photo: its XMP gives a movie of %" PRIu64 " bytes in a file of %"
			  PRIu64, len, file_size);
	} else if (n >= file_size && memcmp(p + (file_size - len) + 4, "ftyp", 4) != 0) {
		x_warn(m, "motion photo: no movie in the last %" PRIu64 " bytes, where its XMP says",
		       len);
	} else {
		return;
	}
	m->embedded_video = 0;
	m->have &= ~XM_EMBEDDED;
}

int x_extract(const uint8_t *p, size_t n, uint64_t file_size, struct x_meta *m,
	      struct sl_err *err)
{
	const char *fmt;
	size_t i;
	int rc = SL_OK;

	memset(m, 0, sizeof(*m));
	if (file_size == 0) {
		x_warn(m, "empty file");
		return SL_OK;
	}
	fmt = x_sniff(p, n);
	snprintf(m->format, sizeof(m->format), "%s", fmt);
	m->pics.whole = n >= file_size;
	m->pics.file_size = file_size;
	for (i = 0; i < sizeof(parsers) / sizeof(parsers[0]); i++) {
		if (strcmp(fmt, parsers[i].family) == 0) {
			rc = parsers[i].parse(p, n, m, err);
			break;
		}
	}
	if (rc == SL_OK && n == file_size && (strcmp(m->format, "jpeg") == 0 ||
					      strcmp(m->format, "mpo") == 0))
		jpg_check_end(p, n, m);
	if (m->have & XM_EMBEDDED)
		check_embedded(p, n, file_size, m);
	if (n < file_size && rc != SL_OK) {
		/* we hold only the head of a streamed file: not proof of damage */
		x_warn(m, "%s", err->msg);
		rc = SL_OK;
	}
	if (m->desc_oom) { /* the record would look complete without a value */
		rc = SL_FAIL(err, SL_E_NOMEM, 0, "out of memory reading descriptive metadata");
	}
	return rc;
}

void x_meta_release(struct x_meta *m)
{
	desc_free(m);
}

/* One catch per streamed file: a movie's (qt.h), an X3F's (x3f.h) or a
 * ZIP's walk (eip.h). */
struct x_stream {
	struct qt_catch *qt;
	struct x3f_catch *x3f;
	struct eip_catch *zip;
};

int x_stream_new(const struct x_meta *m, uint64_t file_size, struct x_stream **out)
{
	struct x_stream *s;
	int movie = qt_movie(m->format) && !m->pics.moov_read;
	int x3f = strcmp(m->format, "x3f") == 0 && !m->pics.whole;
	int zip = strcmp(m->format, "zip") == 0 && !m->pics.whole;

	*out = NULL;
	if (!movie && !x3f && !zip)
		return SL_OK;
	s = calloc(1, sizeof(*s));
	if (s && movie && !(s->qt = qt_catch_new(file_size))) {
		free(s);
		s = NULL;
	}
	if (s && x3f && !(s->x3f = x3f_catch_new(file_size))) {
		free(s);
		s = NULL;
	}
	if (s && zip && !(s->zip = eip_catch_new(file_size))) {
		free(s);
		s = NULL;
	}
	if (!s)
		return SL_E_NOMEM;
	*out = s;
	return SL_OK;
}

int x_stream_feed(struct x_stream *s, const uint8_t *p, size_t n)
{
	if (s->qt)
		return qt_catch_feed(s->qt, p, n);
	return s->x3f ? x3f_catch_feed(s->x3f, p, n) : eip_catch_feed(s->zip, p, n);
}

int x_stream_end(struct x_stream *s, struct x_meta *m)
{
	int rc;

	if (!s)
		return SL_OK;
	rc = s->qt ? qt_catch_end(s->qt, m) : s->x3f ? x3f_catch_end(s->x3f, m) : eip_catch_end(s->zip, m);
	free(s);
	return rc == SL_OK && m->desc_oom ? SL_E_NOMEM : rc;
}

void x_stream_free(struct x_stream *s)
{
	if (!s)
		return;
	qt_catch_free(s->qt);
	x3f_catch_free(s->x3f);
	eip_catch_free(s->zip);
	free(s);
}

void x_unix_datetime(struct x_meta *m, int64_t t)
{
	/* days to civil date (proleptic Gregorian), without gmtime's locks */
	int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
	int64_t secs = t - days * 86400;
	int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1;
	int64_t mo = mp < 10 ? mp + 3 : mp - 9;

	if (m->datetime_original[0])
		return;
	y += mo <= 2;
	if (y < 0 || y > 9999)
		return;
	snprintf(m->datetime_original, sizeof(m->datetime_original),
		 "%04d-%02d-%02dT%02d:%02d:%02d", (int)y, (int)mo, (int)d, (int)(secs / 3600),
		 (int)(secs / 60 % 60), (int)(secs % 60));
}

/* The state wants 64-byte alignment, which XXH3_createState provides and
 * malloc does not. */
struct x_hash {
	XXH3_state_t *st;
};

int x_hash_new(struct x_hash **h)
{
	*h = malloc(sizeof(**h));
	if (!*h)
		return SL_E_NOMEM;
	(*h)->st = XXH3_createState();
	if (!(*h)->st) {
		free(*h);
		*h = NULL;
		return SL_E_NOMEM;
	}
	XXH3_128bits_reset((*h)->st);
	return SL_OK;
}

void x_hash_update(struct x_hash *h, const void *p, size_t n)
{
	XXH3_128bits_update(h->st, p, n);
}

static void to_hex(XXH128_hash_t v, char out[33])
{
	XXH128_canonical_t c;
	static const char hex[] = "0123456789abcdef";
	int i;

	XXH128_canonicalFromHash(&c, v);
	for (i = 0; i < 16; i++) {
		out[2 * i] = hex[c.digest[i] >> 4];
		out[2 * i + 1] = hex[c.digest[i] & 15];
	}
	out[32] = '\0';
}

void x_hash_hex(struct x_hash *h, char out[33])
{
	to_hex(XXH3_128bits_digest(h->st), out);
}

void x_hash_free(struct x_hash *h)
{
	if (!h)
		return;
	XXH3_freeState(h->st);
	free(h);
}

void x_hash_once(const void *p, size_t n, char out[33])
{
	to_hex(XXH3_128bits(p, n), out);
}

int x_phashable(const char *format)
{
	static const char *const formats[] = {"jpeg", "mpo", "cr2", "nef",  "arw",  "dng", "orf",
					      "rw2",  "pef", "srw", "raf", "cr3",  "heic", "heif",
					      "avif", "png",  "webp", "x3f"};
	size_t i;
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(format, formats[i]) == 0)
			return 1;
	return 0;
}

static int is_jpeg_format(const char *format)
{
	return strcmp(format, "jpeg") == 0 || strcmp(format, "mpo") == 0;
}

int x_phash(const uint8_t *p, size_t n, int whole, const struct x_meta *m, uint64_t *out,
	    const char **src, struct sl_err *err)
{
	int o = m->have & XM_ORIENTATION ? m->orientation : 1;
	uint64_t off = m->pics.preview_off, len = m->pics.preview_len;

	*out = 0;
	*src = NULL;
	if (len && off < n && len <= n - off) {
		int rc = jpg_phash(p + off, (size_t)len, NULL, o, out, src, err);
		if (rc == SL_OK)
			*src = "preview";
		return rc;
	}
	if (is_jpeg_format(m->format) && whole)
		return jpg_phash(p, n, m, o, out, src, err);
	if ((strcmp(m->format, "heic") == 0 || strcmp(m->format, "heif") == 0 ||
	     strcmp(m->format, "avif") == 0) && whole)
		return heif_phash(p, n, out, src, err);
	if ((strcmp(m->format, "png") == 0 || strcmp(m->format, "webp") == 0) && whole)
		return raster_phash(m->format, p, n, o, out, src, err);
	return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "phash: no picture in the first %zu bytes", n);
}
