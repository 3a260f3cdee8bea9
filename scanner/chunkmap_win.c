#include "scanner/chunkmap.h"

#include <string.h>

/* Windows has no btrfs of its own: nothing to map. */
int chunkmap_read(const struct anchor *a, const char *rel, struct chunkmap *m,
		  struct sl_err *err)
{
	(void)a;
	memset(m, 0, sizeof(*m));
	return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "'%s': no btrfs chunk map on this platform",
		       rel);
}
