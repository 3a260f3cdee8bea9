/* raster_none.c - raster.h for builds without libpng and libwebp (the
 * Windows build). */
#include "indexer/formats/raster.h"

int raster_phash(const char *format, const uint8_t *p, size_t n, int orientation, uint64_t *out,
		 const char **src, struct sl_err *err)
{
	(void)p;
	(void)n;
	(void)orientation;
	*out = 0;
	*src = NULL;
	return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "phash: this build has no %s decoder", format);
}

int raster_decodes(void)
{
	return 0;
}
