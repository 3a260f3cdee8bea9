/* err.h - the one error type every module reports through.
 *
 * Functions that can fail return an int status (SL_OK or one of the classes
 * below) and fill a caller-owned struct sl_err with the detail: what was being
 * done, on which path, the OS error number and where it was raised.  The class
 * decides what the caller does: per-file classes (IO, CORRUPT, UNSUPPORTED)
 * are recorded on the file and the scan goes on; RESOURCE, NOMEM and DB stop
 * the run with a hint (docs/design.md, "Errors").
 */
#ifndef SL_ERR_H
#define SL_ERR_H

#include <stddef.h>

enum sl_code {
	SL_OK = 0,
	SL_E_IO,          /* the OS refused or failed an operation on one file */
	SL_E_CORRUPT,     /* input bytes are malformed */
	SL_E_UNSUPPORTED, /* feature not available here (FIEMAP on tmpfs...) */
	SL_E_NOMEM,       /* allocation failed */
	SL_E_DB,          /* the database failed */
	SL_E_RESOURCE,    /* out of descriptors, disk full: stop the whole run */
	SL_E_USAGE,       /* the caller asked for something invalid */
	SL_E_CANCELLED    /* the run was asked to stop */
};

struct sl_err {
	int code;         /* enum sl_code */
	int sys;          /* errno (or GetLastError) when the OS reported it, else 0 */
	const char *file; /* source location that raised it */
	int line;
	char msg[384];    /* "operation 'path': reason" */
	/* what only SEEKLESS_DEBUG=1 shows (the SQL a database error came
	 * from: never in msg, which users read); static text or NULL */
	const char *detail;
};

#if defined(__MINGW32__)
/* MinGW's own C99 printf family (__USE_MINGW_ANSI_STDIO), not msvcrt's */
#define SL_PRINTF(a, b) __attribute__((format(gnu_printf, a, b)))
#elif defined(__GNUC__)
#define SL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SL_PRINTF(a, b)
#endif

/* Fill *e (when e is not NULL) and return code.  The message is formatted
 * from fmt; when sys is not 0 ": <strerror(sys)>" is appended. */
int sl_fail(struct sl_err *e, int code, int sys, const char *file, int line,
	    const char *fmt, ...) SL_PRINTF(6, 7);
#define SL_FAIL(e, code, sys, ...) sl_fail((e), (code), (sys), __FILE__, __LINE__, __VA_ARGS__)

/* Reset *e to "no error". */
void sl_err_clear(struct sl_err *e);

/* The class an OS error number belongs to: SL_E_RESOURCE for conditions that
 * will hit every following file too (EMFILE, ENFILE, ENOMEM, ENOSPC, EDQUOT),
 * SL_E_IO for the rest. */
int sl_errno_class(int sys);

/* Short stable name of a class ("io", "corrupt", ...) for logs and the DB. */
const char *sl_code_name(int code);

/* True when the class stops the whole run rather than one file. */
int sl_code_is_fatal(int code);

#endif
