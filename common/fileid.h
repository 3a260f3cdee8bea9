/* fileid.h - a 128-bit file ID as the 64-bit inode number files are keyed
 * by.  NTFS and FAT IDs have an upper half of 0 and keep their lower half
 * as it is (indexes made before 128-bit IDs were read keep their records);
 * ReFS IDs, whose lower halves are not unique, are hashed whole.  Header
 * only and portable: the Windows seam folds an open file's ID (win.h,
 * win_file_id) and the change journal's parser the references in its
 * records (usn.h) the same way, and the two must agree. */
#ifndef SL_FILEID_H
#define SL_FILEID_H

#include <stdint.h>

/* As listings, journal records and OpenFileById give it: two halves. */
struct fileid {
	uint64_t lo, hi;
};

/* splitmix64's finaliser: every input bit reaches every output bit */
static inline uint64_t fileid_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline uint64_t fileid_fold(uint64_t lo, uint64_t hi)
{
	return hi == 0 ? lo : fileid_mix(lo ^ fileid_mix(hi));
}

#endif
