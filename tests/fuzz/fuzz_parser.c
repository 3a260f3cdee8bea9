/* One libFuzzer target per parser, chosen at compile time with
 * -DFUZZ_<NAME> (see tests/fuzz/CMakeLists.txt).  Each input is copied to
 * a buffer of exactly its size so AddressSanitizer sees any read past it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "indexer/formats/eip.h"
#include "indexer/formats/exif.h"
#include "indexer/extract.h"
#include "indexer/formats/heif.h"
#include "indexer/formats/iptc.h"
#include "indexer/formats/parsers.h"
#include "indexer/formats/qt.h"
#include "indexer/formats/raster.h"
#include "indexer/formats/thumb.h"
#include "indexer/formats/x3f.h"
#include "indexer/formats/xmp.h"

#if defined(FUZZ_JPEGDC)
#include "indexer/formats/jpeg_dc.h"
#include "tests/jpegref.h"
#endif

#if defined(FUZZ_QT)
static int same_movie(const struct x_meta *m, const struct x_meta *s)
{
	return m->have == s->have && m->width == s->width && m->height == s->height &&
	       m->pics.moov_read == s->pics.moov_read &&
	       memcmp(&m->duration, &s->duration, sizeof(m->duration)) == 0 &&
	       memcmp(&m->gps_lat, &s->gps_lat, sizeof(double)) == 0 &&
	       memcmp(&m->gps_lon, &s->gps_lon, sizeof(double)) == 0 &&
	       strcmp(m->datetime_original, s->datetime_original) == 0 &&
	       strcmp(m->tz_offset, s->tz_offset) == 0 && strcmp(m->make, s->make) == 0 &&
	       strcmp(m->model, s->model) == 0 && strcmp(m->content_id, s->content_id) == 0;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decoding a picture costs its pixels, and on this VM the page faults of a
 * big fresh buffer cost more than the decoding: a 64 kB input declaring
 * 512k blocks spends most of its time in libjpeg's memset of the
 * coefficient array.  Like libjpeg-turbo's own fuzzers, pictures declaring
 * more than this are only parsed, not decoded; the limits that refuse the
 * bigger ones are tested in unit_extract. */
#define FUZZ_MAX_PIXELS (1u << 20)
#define FUZZ_MAX_RASTER (1u << 17)

#if defined(FUZZ_JPEG) || defined(FUZZ_EXTRACT) || defined(FUZZ_RASTER)
static int small(const struct x_meta *m, uint64_t cap)
{
	return (uint64_t)m->width * m->height <= cap;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size ? size : 1);
	struct x_meta m;
	struct sl_err e;

	(void)e; /* not every parser takes one */
	if (!p)
		return 0;
	memcpy(p, data, size);
	memset(&m, 0, sizeof(m));
#if defined(FUZZ_EXIF)
	{
		struct exif_info info;
		exif_parse(p, size, EXIF_DIMS, &m, &info);
		exif_parse(p, size, EXIF_ROOT_IS_EXIF, &m, NULL);
		exif_parse(p, size, EXIF_ROOT_IS_GPS, &m, NULL);
	}
#elif defined(FUZZ_JPEG)
	{
		uint64_t h;
		const char *src;
		jpg_parse(p, size, &m, &e);
		jpg_check_end(p, size, &m);
		if (size < (1u << 16) && small(&m, FUZZ_MAX_PIXELS)) {
			struct strbuf pic = STRBUF_INIT;
			struct x_meta hm;
			size_t cut = size / 2 + (size % 7) * (size / 16);
			int rc = jpg_phash(p, size, &m, (int)(size % 9), &h, &src, &e); /* thumbnails too */

			/* scan --quick: a head (its first cut bytes) that gives a
			 * hash gives the one the whole file gives */
			memset(&hm, 0, sizeof(hm));
			if (cut > size)
				cut = size;
			jpg_parse(p, cut, &hm, &e);
			if (hm.pics.head_done) {
				uint64_t hh;
				const char *hsrc;
				if (jpg_phash_head(p, cut, &hm, (int)(size % 9), &hh, &hsrc, &e) == SL_OK &&
				    (rc != SL_OK || hh != h || strcmp(hsrc, src) != 0))
					abort();
			}
			x_meta_release(&hm);
			/* the report's small picture: decode, average, turn, encode */
			thumb_jpeg(p, size, (int)(size % 9), 8 + (unsigned)(size % 120), &pic, &e);
			sb_free(&pic);
		}
	}
#elif defined(FUZZ_JPEGDC)
	{
		/* the DC decoder on any bytes; where it decodes and libjpeg
		 * reads the same file without complaint, the two planes must be
		 * one (a difference would be a hash that depends on the path) */
		uint8_t *plane, *ref;
		uint32_t w, h, rw, rh;
		int warnings = 0;
		if (jdc_grey(p, size, 0, &plane, &w, &h, &e) == SL_OK) {
			ref = jref_plane(p, size, FUZZ_MAX_PIXELS / 64, &rw, &rh, &warnings);
			if (ref && !warnings && (rw != w || rh != h ||
						 memcmp(ref, plane, (size_t)w * h) != 0))
				abort();
			free(ref);
			free(plane);
		}
	}
#elif defined(FUZZ_HEIF)
	{
		uint64_t h;
		const char *src;
		heif_phash(p, size, &h, &src, &e);
	}
#elif defined(FUZZ_RASTER)
	{
		uint64_t h;
		const char *src;
		/* the PNG signature's first byte picks libpng, anything else libwebp */
		int png = size && p[0] == 0x89;
		if (png)
			png_parse(p, size, &m, &e);
		else
			webp_parse(p, size, &m, &e);
		if (small(&m, FUZZ_MAX_RASTER))
			raster_phash(png ? "png" : "webp", p, size, (int)(size % 9), &h, &src, &e);
	}
#elif defined(FUZZ_QT)
	{
		/* A movie read whole, the same bytes streamed past in chunks
		 * (their size from the last byte: 1 to 4099), and read as scan
		 * --quick does (a chunk at each offset qt_catch_next names,
		 * what it skips never fed) give the same fields: anything else
		 * is a bug in following boxes across chunk boundaries or gaps,
		 * and aborts. */
		struct x_meta s, q;
		struct qt_catch *c = qt_catch_new(size), *k = qt_catch_new(size);
		size_t chunk = size ? (size_t)p[size - 1] * 37 % 4099 + 1 : 1, off = 0;

		m.pics.whole = 1;
		qt_parse(p, size, &m);
		memset(&s, 0, sizeof(s));
		memset(&q, 0, sizeof(q));
		if (c && k) {
			uint64_t at;
			while (off < size) {
				size_t n = size - off < chunk ? size - off : chunk;
				int more = qt_catch_feed(c, p + off, n);
				off += n;
				if (!more)
					break;
			}
			qt_catch_end(c, &s);
			c = NULL;
			while ((at = qt_catch_next(k)) < size) {
				size_t n = size - at < chunk ? (size_t)(size - at) : chunk;
				if (!qt_catch_feed_at(k, at, p + at, n))
					break;
			}
			qt_catch_end(k, &q);
			k = NULL;
			if (!same_movie(&m, &s) || !same_movie(&s, &q))
				abort();
			x_meta_release(&s);
			x_meta_release(&q);
		}
		qt_catch_free(c);
		qt_catch_free(k);
	}
#elif defined(FUZZ_X3F)
	{
		/* An X3F held whole and the same bytes streamed past in chunks
		 * (of 1 to 4099 bytes, drawn from the input's size: its last
		 * bytes are the directory offset, mostly zeros) give the
		 * same fields and warnings (a file held whole goes through the
		 * catch as one chunk): anything else is a bug in catching
		 * sections across chunk boundaries, and aborts. */
		struct x_meta s;
		struct x3f_catch *c = x3f_catch_new(size);
		uint32_t h = (uint32_t)size * 2654435761u;
		size_t chunk = (h >> 4) % 8 == 0 && size <= 4096 ? (h >> 8) % 7 + 1 : (h >> 8) % 4099 + 1,
		       off = 0; /* bytes one by one only in small inputs: the same paths, faster */

		m.pics.whole = 1;
		x3f_parse(p, size, &m, &e);
		memset(&s, 0, sizeof(s)); /* not whole: the header only */
		if (c && x3f_parse(p, size, &s, &e) == SL_OK) {
			while (off < size) {
				size_t n = size - off < chunk ? size - off : chunk;
				x3f_catch_feed(c, p + off, n);
				off += n;
			}
			x3f_catch_end(c, &s);
			c = NULL;
			if ((m.have != s.have || m.width != s.width || m.height != s.height ||
			     m.orientation != s.orientation || m.iso != s.iso ||
			     memcmp(&m.f_number, &s.f_number, sizeof(double)) != 0 ||
			     memcmp(&m.exposure_time, &s.exposure_time, sizeof(double)) != 0 ||
			     memcmp(&m.focal_length, &s.focal_length, sizeof(double)) != 0 ||
			     strcmp(m.datetime_original, s.datetime_original) != 0 ||
			     strcmp(m.make, s.make) != 0 || strcmp(m.model, s.model) != 0 ||
			     strcmp(m.warnings, s.warnings) != 0))
				abort();
		}
		x3f_catch_free(c);
		x_meta_release(&s);
	}
#elif defined(FUZZ_EIP)
	{
		/* A ZIP walked whole (one chunk) and in chunks of 1 to 4099
		 * bytes (drawn from its size) gives the same record, warnings
		 * and all: anything
		 * else is a bug in following members across chunk boundaries,
		 * and aborts. */
		struct x_meta s;
		struct eip_catch *c = eip_catch_new(size);
		uint32_t h = (uint32_t)size * 2654435761u;
		size_t chunk = (h >> 4) % 8 == 0 && size <= 4096 ? (h >> 8) % 7 + 1 : (h >> 8) % 4099 + 1,
		       off = 0;

		m.pics.whole = 1;
		m.read_nested = x_extract; /* a package's image, as x_extract reads it */
		zip_parse(p, size, &m, &e);
		memset(&s, 0, sizeof(s));
		s.read_nested = x_extract;
		if (c) {
			while (off < size) {
				size_t n = size - off < chunk ? size - off : chunk;
				int more = eip_catch_feed(c, p + off, n);
				off += n;
				if (!more)
					break;
			}
			eip_catch_end(c, &s);
			if (strcmp(m.format, s.format) != 0 || m.have != s.have || m.width != s.width ||
			    m.height != s.height || m.orientation != s.orientation || m.iso != s.iso ||
			    memcmp(&m.f_number, &s.f_number, sizeof(double)) != 0 ||
			    strcmp(m.datetime_original, s.datetime_original) != 0 ||
			    strcmp(m.make, s.make) != 0 || strcmp(m.model, s.model) != 0 ||
			    strcmp(m.warnings, s.warnings) != 0)
				abort();
			x_meta_release(&s);
		}
	}
#elif defined(FUZZ_XMP)
	{
		/* the fields are read back, so a value that lies about its
		 * bounds is seen by ASan */
		static const enum desc_field fs[] = {DF_TITLE, DF_DESCRIPTION, DF_CREATOR, DF_COPYRIGHT,
						     DF_LABEL, DF_KEYWORD, DF_HIER};
		const char *v[8];
		size_t i, k, c;
		int r;
		xmp_parse(p, size, &m, size && p[0] == '<' ? DS_XMP : DS_SIDECAR);
		for (i = 0; i < sizeof(fs) / sizeof(fs[0]); i++)
			for (c = desc_list(&m, fs[i], v, 8), k = 0; k < c && k < 8; k++)
				if (strlen(v[k]) == 0)
					abort(); /* desc.h: never empty */
		if (desc_get_rating(&m, &r) && (r < -1 || r > 5))
			abort();
	}
#elif defined(FUZZ_IPTC)
	{
		const char *v[8];
		size_t k, c;
		/* the first byte picks: IIM datasets, or Photoshop resources */
		if (size && p[0] == 0x1C)
			iptc_parse(p, size, &m);
		else
			iptc_psir(p, size, &m);
		for (c = desc_list(&m, DF_KEYWORD, v, 8), k = 0; k < c && k < 8; k++)
			if (strlen(v[k]) == 0)
				abort();
	}
#elif defined(FUZZ_EXTRACT)
	x_extract(p, size, size, &m, &e);
	if (size < (1u << 16) && small(&m, FUZZ_MAX_PIXELS)) { /* every picture a parser points at: RAW previews too */
		uint64_t h;
		const char *src;
		x_phash(p, size, 1, &m, &h, &src, &e);
	}
#else
	FUZZ_PARSER(p, size, &m, &e);
#endif
	x_meta_release(&m);
	free(p);
	return 0;
}
