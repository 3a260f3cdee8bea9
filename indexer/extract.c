/* extract.c - the dispatcher (extract.h): a file's format sniffed
 * (sniff.h), its parser found in the table below and called, and what
 * every format shares done after it; the content and perceptual hashes.
 * It calls down into indexer/formats/ and nothing there calls it: the one
 * call back a container needs (a package's image, eip.h) goes through the
 * record, x_meta.read_nested, which x_extract sets to itself. */
#include "indexer/extract.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "indexer/formats/eip.h"
#include "indexer/formats/heif.h"
#include "indexer/formats/parsers.h"
#include "indexer/formats/qt.h"
#include "indexer/formats/raster.h"
#include "indexer/formats/x3f.h"

typedef int (*parse_fn)(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);

/* Every format seekless reads: the family x_sniff names and the parser of
 * indexer/formats/ that reads it (parsers.h).  A new format is a file in
 * indexer/formats/, its magic in sniff.c and its line here; a family
 * without a line (mpo, named by jpg_parse; eip, by zip_parse) is one a
 * parser names after reading. */
static const struct format {
	const char *family;
	parse_fn parse;
} format_table[] = {
	{"jpeg", jpg_parse},  {"exv", jpg_parse},   {"png", png_parse},   {"gif", gif_parse},
	{"webp", webp_parse}, {"tiff", tiff_parse}, {"raf", raf_parse},   {"crw", crw_parse},
	{"mrw", mrw_parse},   {"jp2", jp2_parse},   {"bmp", bmp_parse},   {"heic", bmff_parse},
	{"heif", bmff_parse}, {"avif", bmff_parse}, {"cr3", bmff_parse},  {"mp4", bmff_parse},
	{"mov", bmff_parse},  {"3gp", bmff_parse},  {"3g2", bmff_parse},  {"m4v", bmff_parse},
	{"avi", avi_parse},   {"psd", psd_parse},   {"xmp", xmp_file_parse},
	{"x3f", x3f_parse},   {"zip", zip_parse},
};

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
	m->read_nested = x_extract;
	if (file_size == 0) {
		x_warn(m, "empty file");
		return SL_OK;
	}
	fmt = x_sniff(p, n);
	snprintf(m->format, sizeof(m->format), "%s", fmt);
	m->pics.whole = n >= file_size;
	m->pics.file_size = file_size;
	for (i = 0; i < sizeof(format_table) / sizeof(format_table[0]); i++) {
		if (strcmp(fmt, format_table[i].family) == 0) {
			rc = format_table[i].parse(p, n, m, err);
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

/* One catch per streamed file: a movie's (qt.h), an X3F's (x3f.h) or a
 * ZIP's walk (eip.h). */
struct x_stream {
	struct qt_catch *qt;
	struct x3f_catch *x3f;
	struct eip_catch *zip;
	uint64_t pos; /* X3F, ZIP: the end of what was fed */
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
	s->pos += n;
	if (s->qt)
		return qt_catch_feed(s->qt, p, n);
	return s->x3f ? x3f_catch_feed(s->x3f, p, n) : eip_catch_feed(s->zip, p, n);
}

/* Only a movie's catch knows what it can do without (qt.h); X3F's and
 * ZIP's want every byte from the first. */
uint64_t x_stream_next(const struct x_stream *s)
{
	return s->qt ? qt_catch_next(s->qt) : s->pos;
}

int x_stream_feed_at(struct x_stream *s, uint64_t off, const uint8_t *p, size_t n)
{
	if (s->qt)
		return qt_catch_feed_at(s->qt, off, p, n);
	if (off > s->pos)
		return 0;
	if (s->pos - off >= n)
		return 1;
	p += s->pos - off, n -= (size_t)(s->pos - off);
	return x_stream_feed(s, p, n);
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

int x_quick_ok(const struct x_meta *m, const uint8_t *tail, size_t tn)
{
	if (strcmp(m->format, "jpeg") != 0 || !m->pics.head_done)
		return 0;
	return !tail || jpg_quick_ok(m, tail, tn);
}

uint64_t x_quick_tail(uint64_t size)
{
	if (size <= X_QUICK_SPAN)
		return size;
	return size - X_QUICK_SPAN > X_QUICK_SPAN ? size - X_QUICK_SPAN : X_QUICK_SPAN;
}

struct x_quick {
	struct x_hash *h;
	uint64_t size, tail;
	uint64_t fed; /* bytes of the file [0, fed) seen */
	uint64_t got; /* of them, in the two ends */
};

struct x_quick *x_quick_new(uint64_t size)
{
	struct x_quick *q = calloc(1, sizeof(*q));
	uint8_t le[8];
	int i;

	if (!q || x_hash_new(&q->h) != SL_OK) {
		free(q);
		return NULL;
	}
	q->size = size;
	q->tail = x_quick_tail(size);
	for (i = 0; i < 8; i++)
		le[i] = (uint8_t)(size >> (8 * i));
	x_hash_update(q->h, le, sizeof(le));
	return q;
}

/* [lo, hi) of the file, fed in order: what of it lies in [a, b) */
static void quick_part(struct x_quick *q, uint64_t lo, const uint8_t *p, uint64_t hi,
		       uint64_t a, uint64_t b)
{
	uint64_t s = lo > a ? lo : a, e = hi < b ? hi : b;
	if (s < e) {
		x_hash_update(q->h, p + (s - lo), (size_t)(e - s));
		q->got += e - s;
	}
}

void x_quick_feed(struct x_quick *q, uint64_t off, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t end = off + n;

	uint64_t head = q->size < X_QUICK_SPAN ? q->size : X_QUICK_SPAN;

	/* a gap between the ends is skipped; one in an end leaves it short */
	if (off > q->fed && q->fed >= head && off <= q->tail)
		q->fed = off;
	if (off > q->fed || end <= q->fed)
		return;
	b += q->fed - off;
	off = q->fed;
	quick_part(q, off, b, end, 0, head);
	quick_part(q, off, b, end, q->tail, q->size);
	q->fed = end;
}

void x_quick_hex(struct x_quick *q, char out[33])
{
	uint64_t want = (q->size < X_QUICK_SPAN ? q->size : X_QUICK_SPAN) + (q->size - q->tail);
	if (q->got == want)
		x_hash_hex(q->h, out);
	else
		out[0] = '\0';
}

void x_quick_once(const void *p, uint64_t size, char out[33])
{
	struct x_quick *q = x_quick_new(size);

	out[0] = '\0';
	if (!q)
		return;
	x_quick_feed(q, 0, p, (size_t)size);
	x_quick_hex(q, out);
	x_quick_free(q);
}

void x_quick_free(struct x_quick *q)
{
	if (!q)
		return;
	x_hash_free(q->h);
	free(q);
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
	if (is_jpeg_format(m->format) && m->pics.head_done)
		return jpg_phash_head(p, n, m, o, out, src, err);
	if ((strcmp(m->format, "heic") == 0 || strcmp(m->format, "heif") == 0 ||
	     strcmp(m->format, "avif") == 0) && whole)
		return heif_phash(p, n, out, src, err);
	if ((strcmp(m->format, "png") == 0 || strcmp(m->format, "webp") == 0) && whole)
		return raster_phash(m->format, p, n, o, out, src, err);
	return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "phash: no picture in the first %zu bytes", n);
}
