#include "common/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/sys.h"

int sl_fail(struct sl_err *e, int code, int sys, const char *file, int line,
	    const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (!e)
		return code;
	e->code = code;
	e->sys = sys;
	e->file = file;
	e->line = line;
	e->detail = NULL;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	if (sys) {
		char why[128];
		n = strlen(e->msg);
		sys_strerror(sys, why, sizeof(why));
		snprintf(e->msg + n, sizeof(e->msg) - n, ": %s", why);
	}
	return code;
}

void sl_err_clear(struct sl_err *e)
{
	if (!e)
		return;
	e->code = SL_OK;
	e->sys = 0;
	e->file = NULL;
	e->line = 0;
	e->msg[0] = '\0';
	e->detail = NULL;
}

int sl_errno_class(int sys)
{
	switch (sys) {
	case EMFILE:
	case ENFILE:
	case ENOMEM:
	case ENOSPC:
#ifdef EDQUOT
	case EDQUOT:
#endif
		return SL_E_RESOURCE;
	default:
		return SL_E_IO;
	}
}

const char *sl_code_name(int code)
{
	static const char *const names[] = {
		"ok", "io", "corrupt", "unsupported", "nomem", "db", "resource", "usage", "cancelled",
	};
	if (code < 0 || (size_t)code >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[code];
}

int sl_code_is_fatal(int code)
{
	return code == SL_E_NOMEM || code == SL_E_DB || code == SL_E_RESOURCE ||
	       code == SL_E_CANCELLED;
}
