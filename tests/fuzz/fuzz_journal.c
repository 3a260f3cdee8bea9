/* libFuzzer targets for the answers of the OS about files' places, parsed
 * on every platform: -DFUZZ_USN (FSCTL_READ_USN_JOURNAL buffers),
 * -DFUZZ_RETRIEVAL (FSCTL_GET_RETRIEVAL_POINTERS buffers, fed as a chain of
 * answers) and -DFUZZ_CHUNKMAP (btrfs tree search results of chunk items,
 * then looked up). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scanner/chunkmap.h"
#include "scanner/retrieval.h"
#include "scanner/usn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#if defined(FUZZ_USN)
static int count(const struct usn_rec *r, void *ctx)
{
	/* touch everything the parser hands out */
	*(size_t *)ctx += r->name_len + (r->name[r->name_len] == '\0');
	return 0;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size ? size : 1);

	if (!p)
		return 0;
	memcpy(p, data, size);
#if defined(FUZZ_USN)
	{
		struct usn_tally t;
		uint64_t ignore = size ? p[0] : 0;
		int64_t next;
		size_t bad, n = 0;
		memset(&t, 0, sizeof(t));
		usn_parse(p, size, &next, count, &n, &bad);
		usn_tally(p, size, &ignore, 1, &t, &next, &bad);
	}
#elif defined(FUZZ_RETRIEVAL)
	{
		/* the first byte splits the input into answers of that many
		 * extents, all but the last flagged ERROR_MORE_DATA */
		struct rp_state s;
		size_t at = 1, chunk = RP_HEADER + (size_t)(size ? p[0] % 8 : 0) * RP_EXTENT;
		rp_init(&s);
		while (at < size) {
			size_t n = size - at < chunk ? size - at : chunk;
			if (rp_feed(&s, p + at, n, at + n < size) != RP_MORE)
				break;
			at += n;
		}
	}
#elif defined(FUZZ_CHUNKMAP)
	{
		/* the first byte: how many items the search says it holds; the
		 * map is then asked at every item's start and around it */
		struct chunkmap m;
		struct sl_err e;
		uint64_t last = 0, off;
		size_t i;
		memset(&m, 0, sizeof(m));
		if (size && chunkmap_add_items(&m, p + 1, size - 1, p[0], &last, &e) == SL_OK) {
			for (i = 0; i < m.n; i++) {
				(void)chunkmap_map(&m, m.c[i].logical, &off);
				(void)chunkmap_map(&m, m.c[i].logical - 1, &off);
				(void)chunkmap_map(&m, m.c[i].logical + m.c[i].length, &off);
			}
			(void)chunkmap_map(&m, last, &off);
		}
		chunkmap_free(&m);
	}
#endif
	free(p);
	return 0;
}
