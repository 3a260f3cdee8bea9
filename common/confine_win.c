/* confine_win.c - no confinement on Windows yet.  A restricted token or an
 * AppContainer would need the roots' ACLs to grant it access
 * (docs/windows.md). */
#include "common/confine.h"

#include <errno.h>
#include <stdio.h>

int confine(enum confine_stage stage, const struct confine *c, char *how, size_t cap)
{
	(void)stage;
	(void)c;
	snprintf(how, cap, "no sandbox on Windows");
	return ENOSYS;
}
