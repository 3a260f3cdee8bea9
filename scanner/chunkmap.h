/* chunkmap.h - btrfs logical addresses made offsets on the device.
 *
 * btrfs's FIEMAP answers logical addresses: positions in one address space
 * the file system cuts into chunks (typically 1 GiB of data), each placed
 * somewhere on one or more devices.  A chunk's logical address only grows as
 * chunks are made, while its place on the device is the first free stretch,
 * so after a balance or a long life logical order is not the disk's order,
 * and a logical address read from the device is some other chunk's bytes.
 * The chunk tree says where each chunk lies: read it, and a position inside
 * a chunk maps to stripe offset + (address - chunk start).
 *
 * Mapped here: chunks whose data lie whole, in order, on one device, which
 * is every chunk of a file system on one device: SINGLE (one stripe) and DUP
 * (two copies on that device; the first stripe is taken, either holds the
 * bytes).  Not mapped: striped profiles (RAID0/10/5/6 cut a chunk across
 * stripes) and file systems on several devices, where a chunk's device is
 * not the one the plan reads (plan.h groups a btrfs by its mount's device).
 *
 * The parsing of the chunk tree's items (chunkmap_add_items) is portable and
 * bounded, so it is tested and fuzzed; reading them is the platform's
 * (chunkmap_linux.c: BTRFS_IOC_TREE_SEARCH, which needs CAP_SYS_ADMIN;
 * chunkmap_win.c: none).
 */
#ifndef SL_CHUNKMAP_H
#define SL_CHUNKMAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/anchor.h"
#include "common/err.h"

/* Why a file system's positions stay logical (ft_dev.logical). */
enum {
	CM_MAPPED = 0,  /* positions are offsets on the device */
	CM_NOROOT,      /* the chunk tree needs CAP_SYS_ADMIN */
	CM_MULTIDEV,    /* the file system has several devices */
	CM_STRIPED,     /* a file lies in a striped chunk (RAID0/10/5/6) */
	CM_OUTSIDE,     /* a file's address lies in no chunk (moved by a balance since) */
	CM_FAILED,      /* the chunk tree could not be read */
	CM_N
};

struct cm_chunk {
	uint64_t logical, length;
	uint64_t offset;   /* the first stripe's offset on its device */
	uint64_t devid;
	uint16_t stripes;
	uint8_t linear;    /* SINGLE or DUP: offset + (address - logical) */
};

struct chunkmap {
	struct cm_chunk *c;  /* ascending logical, after chunkmap_add_items */
	size_t n, cap;
	uint64_t devices;    /* the file system's device count (0: not known) */
};

/* Read the chunk map of the btrfs holding the file rel below a (opened as
 * anchor.h says).  Returns SL_OK;
 * SL_E_UNSUPPORTED when it is on no btrfs (or the platform has none);
 * SL_E_IO with err->sys EPERM without CAP_SYS_ADMIN, else why the tree could
 * not be read; SL_E_NOMEM. */
int chunkmap_read(const struct anchor *a, const char *rel, struct chunkmap *m,
		  struct sl_err *err);

/* Add the chunk items of a tree search result: nitems items of
 * (search header, item) in buf[0..len), host-endian headers and
 * little-endian items as the kernel gives them; items of other types are
 * passed over.  *last is the last item's key offset (the next search starts
 * after it).  Returns SL_OK, SL_E_CORRUPT (a header or item past the end,
 * a chunk item too short for its stripes), SL_E_NOMEM. */
int chunkmap_add_items(struct chunkmap *m, const unsigned char *buf, size_t len, uint32_t nitems,
		       uint64_t *last, struct sl_err *err);

/* The device offset of logical address a: CM_MAPPED and *off, CM_STRIPED,
 * or CM_OUTSIDE. */
int chunkmap_map(const struct chunkmap *m, uint64_t a, uint64_t *off);

/* What a CM_* says, for reasons ("reading the chunk map needs CAP_SYS_ADMIN..."). */
const char *chunkmap_why(int why);

void chunkmap_free(struct chunkmap *m);

#endif
