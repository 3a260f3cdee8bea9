#include "scanner/chunkmap.h"

#include <string.h>

/* Windows has no btrfs of its own: nothing to map. */
int chunkmap_read(const char *path, struct chunkmap *m, struct sl_err *err)
{
	memset(m, 0, sizeof(*m));
	return SL_FAIL(err, SL_E_UNSUPPORTED, 0, "'%s': no btrfs chunk map on this platform",
		       path);
}
