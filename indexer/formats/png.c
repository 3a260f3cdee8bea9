/* png.c - PNG: IHDR size; EXIF from an eXIf chunk, or from the text chunk
 * ImageMagick and exiv2 write ("Raw profile type exif" or "... APP1":
 * zlib-compressed in zTXt/iTXt, then hex digits after a short header);
 * IPTC and XMP from text chunks too (text_keys). */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "indexer/formats/cursor.h"
#include "indexer/formats/exif.h"
#include "indexer/formats/fmt.h"
#include "indexer/formats/iptc.h"
#include "indexer/formats/parsers.h"
#include "indexer/formats/xmp.h"

/* EXIF is tens of kilobytes; more than this from a text chunk is hostile. */
#define MAX_PROFILE (1u << 20)

static int hexval(uint8_t ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* What a text chunk may carry: EXIF (as ImageMagick and exiv2 write it),
 * IPTC (a "Raw profile" of Photoshop resources, or bare IIM) and XMP (the
 * iTXt keyword "XML:com.adobe.xmp" as the PNG spec names it, or a raw
 * profile of its own). */
enum payload { P_EXIF, P_IPTC, P_XMP, P_N };

static const struct {
	const char *key;
	enum payload kind;
	int hex; /* a "Raw profile": hex digits after a short header */
} text_keys[] = {
	{"Raw profile type exif", P_EXIF, 1},
	{"Raw profile type APP1", P_EXIF, 1},
	{"Raw profile type iptc", P_IPTC, 1},
	{"Raw profile type xmp", P_XMP, 1},
	{"XML:com.adobe.xmp", P_XMP, 0},
};

static void deliver(enum payload kind, const uint8_t *b, size_t n, struct x_meta *m)
{
	size_t skip = 0;

	switch (kind) {
	case P_EXIF:
		if (n > 6 && memcmp(b, "Exif\0\0", 6) == 0)
			skip = 6;
		if (n > skip)
			exif_parse(b + skip, n - skip, 0, m, NULL);
		break;
	case P_IPTC:
		if (n >= 4 && memcmp(b, "8BIM", 4) == 0)
			iptc_psir(b, n, m);
		else
			iptc_parse(b, n, m);
		break;
	default:
		xmp_parse(b, n, m, DS_XMP);
		break;
	}
}

/* "\n<name>\n<spaces><length>\n<hex digits and newlines>" -> bytes. */
static void profile(enum payload kind, const uint8_t *txt, size_t n, struct x_meta *m)
{
	size_t i = 0, lines = 0, o = 0;
	uint8_t *bin;

	while (i < n && lines < 3) /* blank line, name, length */
		if (txt[i++] == '\n')
			lines++;
	bin = malloc(n / 2 + 1);
	if (!bin) {
		m->desc_oom |= kind != P_EXIF;
		return;
	}
	while (i + 1 < n) {
		int hi = hexval(txt[i]), lo;
		if (hi < 0) {
			i++;
			continue;
		}
		lo = hexval(txt[i + 1]);
		if (lo < 0)
			break;
		bin[o++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	deliver(kind, bin, o, m);
	free(bin);
}

static void inflate_profile(enum payload kind, int hex, const uint8_t *z, size_t n,
			    struct x_meta *m)
{
	z_stream s;
	uint8_t *out = malloc(MAX_PROFILE);
	int rc;

	if (!out) {
		m->desc_oom |= kind != P_EXIF;
		return;
	}
	memset(&s, 0, sizeof(s));
	if (inflateInit(&s) != Z_OK) {
		free(out);
		return;
	}
	s.next_in = (Bytef *)(uintptr_t)z;
	s.avail_in = (uInt)(n > UINT32_MAX ? UINT32_MAX : n);
	s.next_out = out;
	s.avail_out = MAX_PROFILE;
	rc = inflate(&s, Z_FINISH);
	if (rc == Z_STREAM_END || rc == Z_BUF_ERROR || rc == Z_OK) {
		if (hex)
			profile(kind, out, MAX_PROFILE - s.avail_out, m);
		else
			deliver(kind, out, MAX_PROFILE - s.avail_out, m);
	} else {
		x_warn(m, "png: bad compressed profile");
	}
	inflateEnd(&s);
	free(out);
}

/* tEXt, zTXt or iTXt chunk data of length len at d.  Only the first
 * profile of each kind is read (seen[] counts them): each may inflate to
 * 1 MiB from 1 kB, so a file of many would buy a thousand times its size
 * in work. */
static void text_chunk(const struct bc *c, size_t d, size_t len, const char *type,
		       struct x_meta *m, int seen[P_N])
{
	static const char *const names[P_N] = {"EXIF", "IPTC", "XMP"};
	const uint8_t *p = c->p + d;
	size_t k, klen = strnlen((const char *)p, len), pos, nk = sizeof(text_keys) / sizeof(text_keys[0]);
	int compressed = 0;
	enum payload kind;

	for (k = 0; k < nk; k++)
		if (klen == strlen(text_keys[k].key) && memcmp(p, text_keys[k].key, klen) == 0)
			break;
	if (k == nk || klen + 1 >= len)
		return;
	kind = text_keys[k].kind;
	if (seen[kind]++ == 1)
		x_warn(m, "png: more than one %s text profile; the first is used", names[kind]);
	if (seen[kind] > 1)
		return;
	pos = klen + 1;
	if (strcmp(type, "zTXt") == 0) {
		compressed = 1;
		pos += 1; /* compression method */
	} else if (strcmp(type, "iTXt") == 0) {
		size_t l, i;
		if (pos + 2 > len)
			return;
		compressed = p[pos] != 0;
		pos += 2;
		for (i = 0; i < 2; i++) { /* language tag, translated keyword */
			l = strnlen((const char *)p + pos, len - pos);
			pos += l + 1;
			if (pos > len)
				return;
		}
	}
	if (pos >= len)
		return;
	if (compressed)
		inflate_profile(kind, text_keys[k].hex, p + pos, len - pos, m);
	else if (text_keys[k].hex)
		profile(kind, p + pos, len - pos, m);
	else
		deliver(kind, p + pos, len - pos, m);
}

int png_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	struct bc c = bc_make(p, n, 1);
	size_t off = 8;
	int first = 1, have_ihdr = 0, profiles[P_N] = {0};

	while (bc_has(&c, off, 8)) {
		uint32_t len, w, h;
		char type[5];
		bc_be32(&c, off, &len);
		memcpy(type, p + off + 4, 4);
		type[4] = '\0';
		if (strcmp(type, "IHDR") == 0 && !have_ihdr) {
			if (!first)
				x_warn(m, "PNG image did not start with IHDR");
			if (len >= 8 && bc_be32(&c, off + 8, &w) == 0 && bc_be32(&c, off + 12, &h) == 0) {
				m->width = w;
				m->height = h;
				m->have |= XM_DIMS;
				have_ihdr = 1;
			}
		} else if (strcmp(type, "eXIf") == 0 || strcmp(type, "zxIf") == 0) {
			if (bc_has(&c, off + 8, len))
				exif_parse(p + off + 8, len, 0, m, NULL);
			else
				x_warn(m, "PNG eXIf chunk truncated");
		} else if ((strcmp(type, "zTXt") == 0 || strcmp(type, "tEXt") == 0 ||
			    strcmp(type, "iTXt") == 0) && bc_has(&c, off + 8, len)) {
			text_chunk(&c, off + 8, len, type, m, profiles);
		} else if (strcmp(type, "IEND") == 0) {
			break;
		}
		first = 0;
		if ((uint64_t)len + 12 > c.len - off)
			break; /* truncated, or we only hold the first chunk of the file */
		off += (size_t)len + 12;
	}
	if (!have_ihdr)
		return SL_FAIL(err, SL_E_CORRUPT, 0, "png: no IHDR chunk");
	return SL_OK;
}
