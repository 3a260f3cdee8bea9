#include "indexer/extract.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "indexer/cursor.h"
#include "indexer/exif.h"

const char *x_sniff(const uint8_t *p, size_t n)
{
	struct bc c = bc_make(p, n, 0);
	const char *b;

	if (bc_is(&c, 0, "\xff\xd8\xff", 3))
		return "jpeg";
	if (bc_is(&c, 0, "\x89PNG\r\n\x1a\n", 8))
		return "png";
	if (bc_is(&c, 0, "GIF87a", 6) || bc_is(&c, 0, "GIF89a", 6))
		return "gif";
	if (bc_is(&c, 0, "RIFF", 4) && bc_is(&c, 8, "WEBP", 4))
		return "webp";
	if (bc_is(&c, 0, "II*\0", 4))
		return bc_is(&c, 8, "CR\x02", 3) ? "cr2" : "tiff";
	if (bc_is(&c, 0, "MM\0*", 4))
		return "tiff";
	if (bc_is(&c, 0, "II+\0", 4) || bc_is(&c, 0, "MM\0+", 4))
		return "bigtiff";
	if (bc_is(&c, 0, "IIRO", 4) || bc_is(&c, 0, "IIRS", 4) || bc_is(&c, 0, "MMOR", 4))
		return "orf";
	if (bc_is(&c, 0, "IIU\0", 4))
		return "rw2";
	if (bc_is(&c, 0, "FUJIFILMCCD-RAW ", 16))
		return "raf";
	if (bc_is(&c, 0, "II\x1a\0\0\0HEAPCCDR", 14))
		return "crw";
	if (bc_is(&c, 0, "\0MRM", 4))
		return "mrw";
	if (bc_is(&c, 0, "\0\0\0\x0cjP  \r\n\x87\n", 12))
		return "jp2";
	if (bc_is(&c, 0, "8BPS", 4))
		return "psd";
	if (bc_is(&c, 0, "BM", 2) && n >= 26)
		return "bmp";
	b = bmff_brand(p, n);
	if (b)
		return b;
	return "";
}

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
		/* otherwise read it as Latin-1 */
		if (o + 2 >= cap)
			break;
		dst[o++] = (char)(0xc0 | (ch >> 6));
		dst[o++] = (char)(0x80 | (ch & 0x3f));
		i++;
	}
	while (o > 0 && dst[o - 1] == ' ')
		o--;
	dst[o] = '\0';
}

int x_extract(const uint8_t *p, size_t n, uint64_t file_size, struct x_meta *m,
	      struct sl_err *err)
{
	const char *fmt;
	int rc = SL_OK;

	memset(m, 0, sizeof(*m));
	if (file_size == 0) {
		x_warn(m, "empty file");
		return SL_OK;
	}
	fmt = x_sniff(p, n);
	snprintf(m->format, sizeof(m->format), "%s", fmt);
	if (strcmp(fmt, "jpeg") == 0)
		rc = jpg_parse(p, n, m, err);
	else if (strcmp(fmt, "png") == 0)
		rc = png_parse(p, n, m, err);
	else if (strcmp(fmt, "gif") == 0)
		rc = gif_parse(p, n, m, err);
	else if (strcmp(fmt, "webp") == 0)
		rc = webp_parse(p, n, m, err);
	else if (strcmp(fmt, "tiff") == 0 || strcmp(fmt, "cr2") == 0 || strcmp(fmt, "orf") == 0 ||
		 strcmp(fmt, "rw2") == 0) {
		if (exif_parse(p, n, EXIF_DIMS, m) != SL_OK)
			rc = SL_FAIL(err, SL_E_CORRUPT, 0, "tiff: %s", m->warnings);
	} else if (bmff_brand(p, n))
		rc = bmff_parse(p, n, m, err);
	if (n < file_size && rc != SL_OK)
		/* we hold only the head of a streamed file: not proof of damage */
		rc = SL_OK;
	return rc;
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
