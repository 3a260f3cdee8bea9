/* rdfault.c - the reader's fault injection (reader.h), shared by every
 * platform's reader. */
#include "indexer/reader.h"

#include <stdatomic.h>

/* One pending fault per operation. */
static struct {
	atomic_int kind;
	atomic_int skip;
} faults[RD_NOPS];

void rd_inject(enum rd_op op, enum rd_fault fault, int skip)
{
	atomic_store(&faults[op].skip, skip);
	atomic_store(&faults[op].kind, (int)fault);
}

int rd_take_fault(enum rd_op op)
{
	int kind = atomic_load(&faults[op].kind);
	if (kind == RD_FAULT_NONE)
		return RD_FAULT_NONE;
	if (atomic_fetch_sub(&faults[op].skip, 1) > 0)
		return RD_FAULT_NONE;
	atomic_store(&faults[op].kind, RD_FAULT_NONE);
	return kind;
}
