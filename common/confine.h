/* confine.h - what a scan may do, narrowed twice before it reads a file.
 *
 * A scan reads files that anyone with write access to a root put there,
 * and hands their bytes to parsers; a parser bug meeting a crafted file
 * must not become the scanning user's (root's, for the system service)
 * power over the machine.  So a scan gives up, for the rest of its life,
 * what it will not need:
 *
 *   CONFINE_SCAN, before it opens the index and walks: files may be read
 *     only below the roots (held open: anchor.h) and written only in the
 *     index's folder, beside what the walk, the locate pass and the device
 *     probe read (/proc for this process's own entry, /sys, the file system
 *     ids under /dev/disk, shared libraries); no TCP, no signal or abstract
 *     socket out of the process.
 *   CONFINE_READ, before the first file is read and parsed: the roots, the
 *     index's folder, /proc and the files named in
 *     read_files (the disks' I/O counters, for the background mode), and
 *     nothing else; as root, every capability dropped but the two reading
 *     needs (CAP_DAC_READ_SEARCH: read any file; CAP_FOWNER: O_NOATIME, so
 *     that reading leaves access times as they were); and a system-call
 *     filter refusing what no reader or parser does (sockets, signals to
 *     other processes, ptrace, mounts, modules, ownership, modes, extended
 *     attributes, links, renames, device nodes, open_by_handle_at, file
 *     flag ioctls...).
 *
 * docs/security.md lists each allowance with why, and the tests that show
 * it holds.  Linux: Landlock (each stage a further layer; what the
 * kernel's ABI cannot restrict stays allowed, and the summary says which),
 * capabilities, seccomp.  Windows: nothing yet (docs/windows.md).
 *
 * Implementations: confine_linux.c, confine_win.c.
 */
#ifndef SL_CONFINE_H
#define SL_CONFINE_H

#include <stddef.h>

#include "common/anchor.h"

enum confine_stage { CONFINE_SCAN, CONFINE_READ };

struct confine {
	struct anchor *const *roots; /* read-only; NULL entries skipped */
	size_t nroots;
	const char *write_dir;       /* read-write: the index's folder */
	const char *const *read_files; /* more files, read-only: the roots'
					  device nodes (their superblocks tell
					  the file systems' ids), the disks' I/O
					  counters */
	size_t nread_files;
};

/* Narrow this process to what stage allows (above), for good.  Call
 * CONFINE_READ before any thread is started: capabilities are each
 * thread's own.  how gets what took effect, and what could not ("Landlock
 * ABI 7: ...; capabilities: ...; seccomp: ...").  Returns 0 when all of it
 * took effect, else the first errno value (ENOSYS: no such mechanism in
 * this kernel or on this platform); the stages that did take effect
 * stand. */
int confine(enum confine_stage stage, const struct confine *c, char *how, size_t cap);

#endif
