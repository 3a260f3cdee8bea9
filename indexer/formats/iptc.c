#include "indexer/formats/iptc.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "indexer/formats/cursor.h"
#include "indexer/formats/desc.h"
#include "indexer/formats/parsers.h"

/* Windows-1252's 0x80-0x9F (0: unassigned); 0xA0-0xFF are Latin-1's. */
static const uint16_t cp1252_hi[32] = {
	0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0,      0x017D, 0,
	0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178,
};

/* Append the Windows-1252 text s as UTF-8. */
static void from_cp1252(struct strbuf *sb, const uint8_t *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned u = s[i];
		char o[3];
		if (u >= 0x80 && u < 0xA0)
			u = cp1252_hi[u - 0x80] ? cp1252_hi[u - 0x80] : '?';
		if (u < 0x80) {
			sb_addc(sb, (char)u);
		} else if (u < 0x800) {
			o[0] = (char)(0xC0 | u >> 6);
			o[1] = (char)(0x80 | (u & 0x3F));
			sb_add(sb, o, 2);
		} else {
			o[0] = (char)(0xE0 | u >> 12);
			o[1] = (char)(0x80 | ((u >> 6) & 0x3F));
			o[2] = (char)(0x80 | (u & 0x3F));
			sb_add(sb, o, 3);
		}
	}
}

static void add_text(struct x_meta *m, enum desc_field f, int utf8, const uint8_t *s, size_t n)
{
	struct strbuf sb = STRBUF_INIT;

	/* IIM pads some values with NULs, and what follows one is not text
	 * (exiftool stops there too) */
	const uint8_t *z = memchr(s, 0, n);
	if (z)
		n = (size_t)(z - s);
	if (utf8 || sl_utf8_valid((const char *)s, n)) {
		desc_add(m, f, DS_IPTC, (const char *)s, n);
		return;
	}
	from_cp1252(&sb, s, n);
	if (sb.oom)
		m->desc_oom = 1;
	else
		desc_add(m, f, DS_IPTC, sb.p, sb.len);
	sb_free(&sb);
}

void iptc_parse(const uint8_t *p, size_t n, struct x_meta *m)
{
	struct bc c = bc_make(p, n, 1);
	size_t off = 0;
	int utf8 = 0;

	while (off < n) {
		uint8_t mark = 0, rec, ds;
		uint16_t len16;
		uint64_t len;
		enum desc_field f;

		if (bc_u8(&c, off, &mark) || mark != 0x1C) {
			/* IIM is often followed by padding NULs */
			if (mark != 0)
				x_warn(m, "IPTC: no dataset marker at %zu", off);
			return;
		}
		if (bc_u8(&c, off + 1, &rec) || bc_u8(&c, off + 2, &ds) ||
		    bc_be16(&c, off + 3, &len16)) {
			x_warn(m, "IPTC: truncated dataset header at %zu", off);
			return;
		}
		off += 5;
		len = len16;
		if (len16 & 0x8000) { /* extended: the next len16 & 0x7FFF bytes hold the length */
			unsigned k = len16 & 0x7FFF, i;
			uint8_t b;
			if (k > 8) {
				x_warn(m, "IPTC: a %u-byte dataset length", k);
				return;
			}
			for (len = 0, i = 0; i < k; i++) {
				if (bc_u8(&c, off + i, &b)) {
					x_warn(m, "IPTC: truncated dataset length");
					return;
				}
				len = len << 8 | b;
			}
			off += k;
		}
		if (!bc_has(&c, off, len)) {
			x_warn(m, "IPTC: dataset %u:%u runs past its block", rec, ds);
			return;
		}
		if (rec == 1 && ds == 90)
			utf8 = len >= 3 && memcmp(p + off, "\x1b%G", 3) == 0;
		if (rec == 2) {
			switch (ds) {
			case 5: f = DF_TITLE; break;
			case 25: f = DF_KEYWORD; break;
			case 80: f = DF_CREATOR; break;
			case 116: f = DF_COPYRIGHT; break;
			case 120: f = DF_DESCRIPTION; break;
			default: f = DF_N; break;
			}
			if (f != DF_N)
				add_text(m, f, utf8, p + off, (size_t)len);
		}
		off += (size_t)len;
	}
}
