/* retrieval.h - reading the answers of FSCTL_GET_RETRIEVAL_POINTERS.
 *
 * Platform-neutral so it is tested on every platform with synthetic buffers
 * (tests/unit/test_retrieval.c); extents_win.c feeds it what the file
 * system returned.  The buffer (RETRIEVAL_POINTERS_BUFFER, little-endian):
 *
 *   u32 ExtentCount, u32 padding, i64 StartingVcn,
 *   ExtentCount x { i64 NextVcn, i64 Lcn }
 *
 * Extent i covers VCNs [previous NextVcn (StartingVcn for the first),
 * NextVcn) at clusters from Lcn; Lcn -1 is a hole (sparse files) or the
 * unstored part of a compression unit, which is skipped when choosing the
 * file's first position.  A file is asked from VCN 0 and, while the answer
 * is ERROR_MORE_DATA, again from the last NextVcn.
 *
 * Every answer is checked: the returned StartingVcn may not lie after the
 * one asked for (the file system may round down), VCNs must strictly
 * increase, LCNs must be -1 or non-negative, and a continuation must move
 * forward.  Wine answers every file with ExtentCount 1, StartingVcn 1,
 * NextVcn 0, Lcn 0, which fails the first two: such a volume has no usable
 * extent map. */
#ifndef SL_RETRIEVAL_H
#define SL_RETRIEVAL_H

#include <stddef.h>
#include <stdint.h>

/* Size of the fixed header and of one extent. */
#define RP_HEADER 16
#define RP_EXTENT 16

struct rp_state {
	int64_t next_vcn;    /* where the next request starts (0 at first) */
	int64_t first_lcn;   /* first real cluster, when located */
	int64_t prev_end;    /* cluster after the previous real extent */
	uint32_t fragments;  /* physically discontiguous real runs */
	uint32_t extents;    /* extents seen, holes included */
	int located;         /* first_lcn is valid */
	int have_prev;
};

enum rp_result {
	RP_DONE,    /* the map is complete */
	RP_MORE,    /* the answer was ERROR_MORE_DATA: ask again from next_vcn */
	RP_BOGUS,   /* an impossible answer: treat the volume as having no map */
	RP_NOTHING  /* a first answer of no extents at all: says nothing of
		       this file, nor of the volume's other files */
};

void rp_init(struct rp_state *s);

/* Take one answer of len bytes; more: the call reported ERROR_MORE_DATA. */
enum rp_result rp_feed(struct rp_state *s, const unsigned char *buf, size_t len, int more);

/* The volume byte offset of cluster lcn: LCNs count from the cluster heap,
 * which on FAT32 and exFAT begins after the reserved sectors and the FATs
 * (FSCTL_GET_RETRIEVAL_POINTER_BASE gives it in sectors; 0 on NTFS), so
 * base_sectors * sector + lcn * cluster.  Returns 0, or -1 when a value is
 * negative, a size is 0, or the offset would not fit in 63 bits. */
int rp_offset(int64_t lcn, uint32_t cluster, int64_t base_sectors, uint32_t sector,
	      uint64_t *out);

#endif
