/* heif_none.c - heif.h for builds without libheif (the Windows build). */
#include "indexer/formats/heif.h"

int heif_phash(const uint8_t *p, size_t n, uint64_t *out, const char **src, struct sl_err *err)
{
	(void)p;
	(void)n;
	*out = 0;
	*src = NULL;
	return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "phash: this build has no HEIF decoder");
}

void heif_prepare(void)
{
}
