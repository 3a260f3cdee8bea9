/* bmff.c - ISO base media files (HEIC, AVIF, CR3, MP4/MOV): the family from
 * the ftyp box.  Item properties (ispe) and the Exif item are read by the
 * extraction issue's BMFF walker; until then these files get a format only. */
#include <string.h>

#include "indexer/cursor.h"
#include "indexer/extract.h"

static const struct {
	char brand[5];
	const char *name;
} brands[] = {
	{"heic", "heic"}, {"heix", "heic"}, {"heim", "heic"}, {"heis", "heic"},
	{"hevc", "heic"}, {"hevx", "heic"}, {"mif1", "heif"}, {"msf1", "heif"},
	{"avif", "avif"}, {"avis", "avif"}, {"crx ", "cr3"},  {"qt  ", "mov"},
	{"isom", "mp4"},  {"iso2", "mp4"},  {"mp41", "mp4"},  {"mp42", "mp4"},
	{"M4V ", "mp4"},  {"3gp4", "3gp"},  {"3gp5", "3gp"},
};

static const char *lookup(const uint8_t *b)
{
	size_t i;
	for (i = 0; i < sizeof(brands) / sizeof(brands[0]); i++)
		if (memcmp(b, brands[i].brand, 4) == 0)
			return brands[i].name;
	return NULL;
}

const char *bmff_brand(const uint8_t *p, size_t n)
{
	struct bc c = bc_make(p, n, 1);
	uint32_t size;
	const char *name, *fallback = NULL;
	size_t off;

	if (!bc_has(&c, 0, 12) || !bc_is(&c, 4, "ftyp", 4) || bc_be32(&c, 0, &size) || size < 12)
		return NULL;
	if (!bc_has(&c, 0, size))
		size = (uint32_t)(c.len < 64 ? c.len : 64);
	name = lookup(p + 8);
	if (name && strcmp(name, "heif") != 0 && strcmp(name, "mp4") != 0)
		return name;
	fallback = name;
	/* the major brand may be generic (mif1, isom): look at compatible ones */
	for (off = 16; off + 4 <= size; off += 4) {
		const char *b = lookup(p + off);
		if (b && strcmp(b, "heif") != 0 && strcmp(b, "mp4") != 0)
			return b;
		if (b && !fallback)
			fallback = b;
	}
	return fallback ? fallback : "bmff";
}

int bmff_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	(void)p;
	(void)n;
	(void)m;
	(void)err;
	return SL_OK;
}
