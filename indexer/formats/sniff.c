/* sniff.c - a file's format from its first bytes (sniff.h). */
#include "indexer/formats/sniff.h"

#include <string.h>

#include "indexer/formats/cursor.h"
#include "indexer/formats/parsers.h"
#include "indexer/formats/qt.h"

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
