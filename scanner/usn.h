/* usn.h - reading the NTFS change journal's records.
 *
 * FSCTL_READ_USN_JOURNAL answers with the next USN to ask for (8 bytes)
 * followed by records; this module checks and decodes them, on every
 * platform, so the parser is tested with synthetic buffers
 * (tests/unit/test_usn.c) where there is no NTFS.  Versions 2 (64-bit file
 * references) and 3 (128-bit, ReFS) are decoded; version 4 (range
 * tracking) records are skipped.  Every length and offset is checked against
 * the record and the buffer before use: the buffer comes from a file system
 * driver, but a bug there must not become ours.
 *
 * The journal's use in scans (which volumes, when it replaces the walk) is
 * described in docs/windows.md. */
#ifndef SL_USN_H
#define SL_USN_H

#include <stddef.h>
#include <stdint.h>

#include "common/fileid.h"
#include "common/strbuf.h"

/* Reason bits (winioctl.h USN_REASON_*). */
#define USN_R_DATA_OVERWRITE 0x00000001u
#define USN_R_DATA_EXTEND 0x00000002u
#define USN_R_DATA_TRUNCATION 0x00000004u
#define USN_R_FILE_CREATE 0x00000100u
#define USN_R_FILE_DELETE 0x00000200u
#define USN_R_RENAME_OLD_NAME 0x00001000u
#define USN_R_RENAME_NEW_NAME 0x00002000u
#define USN_R_HARD_LINK_CHANGE 0x00010000u
#define USN_R_CLOSE 0x80000000u

#define USN_ATTR_DIRECTORY 0x10u
/* A file or folder whose data is not on this disk (winnt.h
 * FILE_ATTRIBUTE_OFFLINE, _RECALL_ON_OPEN, _RECALL_ON_DATA_ACCESS): a cloud
 * placeholder, an HSM stub.  Reading it would download it, so the walk
 * never does (win_entry_kind), and neither does the journal's list. */
#define USN_ATTR_REMOTE (0x1000u | 0x40000u | 0x400000u)

struct usn_rec {
	unsigned major;        /* 2 or 3 */
	uint64_t file_ref[2];  /* low, high (high is 0 for version 2) */
	uint64_t parent_ref[2];
	int64_t usn;
	int64_t timestamp;     /* FILETIME units */
	uint32_t reason;
	uint32_t attrs;
	const char *name;      /* UTF-8, valid during the callback */
	size_t name_len;
};

/* What a record means for the index. */
enum usn_kind {
	USN_OTHER,   /* attributes, security, streams: nothing to re-read */
	USN_CREATED,
	USN_CHANGED, /* data written, extended or truncated */
	USN_RENAMED,
	USN_DELETED
};
enum usn_kind usn_kind(uint32_t reason);

/* Called for each record; non-zero stops the walk and is returned. */
typedef int (*usn_fn)(const struct usn_rec *r, void *ctx);

/* Decode one FSCTL_READ_USN_JOURNAL answer of len bytes: *next_usn gets the
 * USN to continue from, fn sees every record in order.  Returns 0; fn's
 * non-zero value; -1 for a malformed buffer (*bad_at = its byte offset);
 * -2 when memory ran out. */
int usn_parse(const unsigned char *buf, size_t len, int64_t *next_usn, usn_fn fn, void *ctx,
	      size_t *bad_at);

/* What a stretch of the journal holds, for deciding whether a volume
 * changed since the last scan. */
struct usn_tally {
	uint64_t created, changed, renamed, deleted; /* records that matter */
	uint64_t other;   /* attribute, security, stream changes: nothing to re-read */
	uint64_t ignored; /* records of files in ignored folders (the index's own) */
	uint64_t remote;  /* created or written, but not on this disk (USN_ATTR_REMOTE):
			     nothing to read either */
	uint64_t records;
	/* With max_ids > 0: the whole file references (128 bits in version 3
	 * records: ReFS's lower halves are not unique) of files (not folders)
	 * created or written, each once, up to max_ids (then overflow). */
	size_t max_ids;
	struct fileid *ids;
	size_t nids, cap_ids;
	int overflow;
	int nomem;
};

/* Whether the changes tallied can be applied from the journal's list
 * alone (ids): only files created or written, no rename, no deletion, not
 * too many.  Renames and deletions need the walk to be found. */
int usn_listable(const struct usn_tally *t);

void usn_tally_free(struct usn_tally *t);

/* Sort the collected ids and drop repeats. */
void usn_ids_unique(struct usn_tally *t);

/* Count one FSCTL_READ_USN_JOURNAL answer into t; records whose parent
 * folder's file reference, folded (fileid.h) as sys_file_id gives a
 * folder's ID, is in ignore_dirs (n of them) count as ignored.  Returns as
 * usn_parse. */
int usn_tally(const unsigned char *buf, size_t len, const uint64_t *ignore_dirs, size_t n,
	      struct usn_tally *t, int64_t *next_usn, size_t *bad_at);

/* 1 when t holds no change that matters: the volume can go unwalked. */
int usn_quiet(const struct usn_tally *t);

/* Append UTF-16LE bytes (n units) as UTF-8; unpaired surrogates become
 * U+FFFD.  Returns 0 or -1 (no memory). */
int usn_utf16le_to_utf8(const unsigned char *p, size_t n, struct strbuf *out);

#endif
