/* sys.h - the few OS services the portable code needs (clock, CPU count,
 * error text).  One implementation per platform: sys_posix.c, sys_win.c. */
#ifndef SL_SYS_H
#define SL_SYS_H

#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>

#include "common/strbuf.h"

/* Monotonic time in seconds, for phase timings. */
double sys_now(void);

/* Wall-clock time, nanoseconds since 1970 (for deadlines and seeds). */
int64_t sys_wall_ns(void);

/* CPU time consumed by the calling thread, in seconds (0 if unknown). */
double sys_thread_cpu(void);

/* Number of CPUs this process may run on (at least 1). */
int sys_cpu_count(void);

/* Memory this process may use, in bytes: the machine's physical memory, or
 * less where a limit says so (Linux: the cgroup's memory.max, as in a
 * container or a systemd unit with MemoryMax=); 0 if unknown. */
uint64_t sys_mem_bytes(void);

/* Thread-safe text for an OS error number, written to buf. */
void sys_strerror(int sys, char *buf, size_t len);

/* Peak resident set size of this process in bytes (0 if unknown). */
uint64_t sys_peak_rss(void);

/* Make sure every directory above path exists (mode 0700 for new ones).
 * Returns 0 or an errno value. */
int sys_mkdir_parents(const char *path);

/* Device and file number of path (not following a final symlink).
 * Returns 0 or an errno value. */
int sys_file_id(const char *path, uint64_t *dev, uint64_t *ino);

/* The index's own files, checked before seekless opens them (and, with
 * create, made: empty, readable by their owner only).  An existing one
 * must be a regular file (ELOOP: a symbolic link; EISDIR: a directory;
 * EINVAL: something else) with no other name (EMLINK: a hard link is a way
 * to make root write into someone else's file); a root process writes
 * only files that root or the owner of their folder owns (EPERM: planted
 * by someone else); group and others lose what access they had (POSIX:
 * the mode becomes 0600; without create, a file that cannot be changed at
 * all, on a read-only file system or immutable, keeps it).  Without
 * create, a missing file is fine.  Returns 0 or an errno value. */
int sys_create_private(const char *path, int create);

/* Whether this process may write path (a file; a folder: make files in
 * it), as an open would find: 0, or why not as an errno value (EROFS a
 * read-only file system, EACCES no permission, EPERM a file nothing may
 * change, ENOENT nothing there).  Only a question: opening may still
 * fail. */
int sys_can_write(const char *path);

/* The default index location: $XDG_DATA_HOME/seekless/index.db, else
 * ~/.local/share/seekless/index.db (Windows: under %LOCALAPPDATA%).
 * Returns 0, ENOENT when no home directory is known, or ENOMEM. */
int sys_default_db_path(struct strbuf *out);

/* The configuration files: system-wide (system = 1: /etc/seekless.conf;
 * Windows: %ProgramData%\seekless\seekless.conf) or the user's
 * ($XDG_CONFIG_HOME/seekless/config, else ~/.config/seekless/config;
 * Windows: %APPDATA%\seekless\config).  Returns 0, or -1 when no home
 * directory is known. */
int sys_config_path(int system, struct strbuf *out);

/* The user's home directory, or NULL. */
const char *sys_home(void);

/* Absolute path of the running program.  Returns 0 or an errno value. */
int sys_self_exe(struct strbuf *out);

/* On SIGINT/SIGTERM (Windows: console control events, and the service's
 * stop event, see service_win.c) set *flag instead of dying; a second
 * signal ends the process at once. */
void sys_on_interrupt(atomic_int *flag);

/* Act as if that signal (console event) arrived: the Windows service's STOP
 * and SHUTDOWN controls end a scan this way. */
void sys_raise_interrupt(void);

/* Empty the kernel's caches (page cache, dentries, inodes) after syncing,
 * for cold-cache measurements.  Needs privileges; returns 0 or an errno
 * value (EPERM/EACCES when not allowed, ENOSYS where there is no such
 * thing). */
int sys_drop_caches(void);

/* Lock file at path (created 0600): exclusive, not waiting, released when
 * the process ends however it ends.  Returns 0 (*handle set; our pid is
 * written in the file), EWOULDBLOCK (*holder = the process that holds it:
 * as the system says where it can (Linux: /proc/locks), else the pid that
 * process wrote in the file; 0 if unknown), or another errno value. */
int sys_lock(const char *path, void **handle, long *holder);
void sys_unlock(void *handle);

long sys_pid(void);

/* Whether this process has administrator rights (root; Windows: elevated). */
int sys_is_admin(void);

/* Make the calling thread as unobtrusive as the OS allows: the idle I/O
 * class (Linux ioprio_set; served only when no one else wants the disk, on
 * schedulers that honour classes), the lowest CPU priority (nice 19 and
 * SCHED_IDLE; Windows: THREAD_MODE_BACKGROUND_BEGIN, which lowers both).
 * Threads created afterwards inherit it on Linux, not on Windows: every
 * thread calls this for itself.  Writes what took effect (and what did not,
 * with why) to how.  Returns 0 when everything asked for took effect, else
 * the first errno value. */
int sys_background(char *how, size_t cap);

/* Keep the machine from sleeping for idle while the calling thread works
 * (on), and let it again (off).  Windows: SetThreadExecutionState with
 * ES_SYSTEM_REQUIRED, held (ES_CONTINUOUS) until turned off or the thread
 * ends; disk and CPU work do not count as use there, so idle sleep
 * suspended long scans, which then finished in the user's day.  The
 * display may still turn off, and a user's own sleep (lid, button) still
 * sleeps.  Linux: nothing (a systemd unit is inhibited by logind's
 * policy, not by the program).  Returns 0, or an errno value (ENOSYS where
 * there is nothing to do). */
int sys_keep_awake(int on);

/* Keep freed memory for reuse rather than giving it back to the system at
 * once: a decoder's buffers, allocated and freed for every picture, then
 * come back already mapped instead of as fresh pages, each a page fault
 * and a zeroed page (glibc: mmap threshold 32 MiB, trim threshold 64 MiB,
 * where the defaults start at 128 KiB; issue 41 measured 85 faults a file
 * on a warm scan of camera files).  No effect where there is no such
 * setting. */
void sys_keep_freed_memory(void);

/* Bytes this process made the kernel transfer to or from storage (reads
 * that missed the page cache, including read-ahead it triggered; writes
 * it dirtied).  Returns 0, or an errno value (ENOSYS where unknown). */
int sys_io_bytes(uint64_t *bytes);

/* Whether stream f is a terminal (progress lines go only to terminals). */
int sys_is_tty(FILE *f);

/* Sleep for the given number of seconds. */
void sys_sleep(double seconds);

/* Run a shell command line; returns its exit status, or -1. */
int sys_run(const char *cmdline);

/* fopen for a UTF-8 path (Windows: _wfopen; the C library's fopen would
 * take the ANSI code page there). */
FILE *sys_fopen(const char *path, const char *mode);

/* Put the file at from in the place of to, in one step: a reader of to sees
 * the old file or the new one, never a part (POSIX rename; Windows
 * MoveFileEx replacing).  0 or an errno value; from is left on failure. */
int sys_replace(const char *from, const char *to);

/* Remove a file (UTF-8 path); 0 or an errno value. */
int sys_remove(const char *path);

/* Absolute, canonical form of an existing path, in the form seekless stores
 * (Windows: "C:/dir/file", '/' separators; "C:/" for a drive's root, no
 * trailing '/' otherwise).  Links on the way are resolved (Linux: symbolic
 * links; Windows: junctions, symbolic links, mounted folders and subst
 * drives) and, on Windows, every name takes the case it has on the disk, so
 * that paths the system reports later (the change journal) start the same
 * way.  A volume mounted in a folder with no drive letter has no other name
 * than that folder's path, which is then kept.  Returns 0 or an errno value
 * (out empty). */
int sys_abs_path(const char *path, struct strbuf *out);

/* Whether names that differ only in case are one name here, as the
 * platform's own file systems compare them (Windows: 1, NTFS, FAT and exFAT
 * as Windows mounts them; Linux: 0).  Excludes then match without case. */
int sys_names_fold_case(void);

/* Whether path is root or lies below it, as this platform compares names
 * (Linux: byte for byte; Windows: without case, as NTFS does, by
 * CompareStringOrdinal ignoring case on UTF-16).  Both are in the stored
 * form ('/' separators); below means the match ends where a name does:
 * path goes on with '/' there, or root itself ends in '/' ("C:/", "/"), so
 * "D:/Photos2" is not below "D:/Photos".  *len gets the number of bytes of
 * path that spell root (which may differ from strlen(root) when the case
 * differs), or 0 when path is not there (an empty root holds nothing).
 * Returns 0, or ENOMEM (*len 0). */
int sys_path_prefix(const char *path, const char *root, size_t *len);

/* Replace argv with the command line in UTF-8 (Windows: from the UTF-16
 * command line, since main's argv is in the ANSI code page; POSIX: argv
 * is already bytes as given, nothing to do). */
void sys_utf8_args(int *argc, char ***argv);

/* Allow as many open descriptors as the hard limit permits; deep trees and
 * parallel readers hold several at once. */
void sys_raise_fd_limit(void);

/* Descriptors this process may have open at once as the limit stands now
 * (Windows: no per-process limit that matters, a large number). */
size_t sys_fd_limit(void);

#endif
