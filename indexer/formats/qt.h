/* qt.h - QuickTime and MP4 movies (MOV, MP4, M4V, 3GP, 3G2): what the
 * movie box (moov) says.
 *
 * Fields: the duration (mvhd, or mvex/mehd in a fragmented file whose mvhd
 * says 0), the video track's size as displayed (tkhd, turned by its matrix),
 * the capture time, place, camera and Apple's content identifier.  Apple's
 * keys (moov/meta: keys + ilst, "com.apple.quicktime.*") win over the
 * QuickTime user data (moov/udta: (c)xyz, (c)mak, (c)mod) and iTunes-style
 * items (udta/meta/ilst), because they are what the phone wrote for the
 * capture: com.apple.quicktime.creationdate carries the local time and its
 * offset, so it gives datetime_original and tz_offset.  Without it, mvhd's
 * creation time: seconds since 1904 in UTC by the specification, but many
 * cameras write their local clock there, so tz_offset stays unknown (a time
 * before 1970 is taken as counted from 1970, as exiftool does).
 *
 * A moov box is read in memory either way; two ways get it there:
 *  - held whole (a file the reader holds whole, or the first chunk of a
 *    streamed one when the box lies in it): bmff_parse calls qt_moov on it;
 *  - streamed past (the box after gigabytes of media data): qt_catch is fed
 *    every chunk in order, follows the top-level boxes across chunk
 *    boundaries, skips everything but moov, and inside moov copies only the
 *    boxes qt_moov reads (trak, mdia and mvex are opened; the other boxes
 *    are copied whole, but those over QT_LEAF_MAX - sample tables - are
 *    left out in both ways), at most QT_CATCH_MAX bytes in all.  A phone
 *    video's moov without its sample tables is a few kilobytes.
 * Both give the same fields for the same bytes (the fuzz target qt checks
 * that for any input and any chunking).  Nothing here does I/O. */
#ifndef SL_QT_H
#define SL_QT_H

#include <stddef.h>
#include <stdint.h>

#include "indexer/formats/fmt.h"

#define QT_LEAF_MAX ((uint64_t)1 << 20)
#define QT_CATCH_MAX ((size_t)4 << 20)

/* Whether the first bytes are a QuickTime movie without an ftyp box (older
 * .mov files begin with moov, mdat, wide, free, skip or pnot). */
int qt_sniff(const uint8_t *p, size_t n);

/* Whether a format name (extract.h) is one of the movie families. */
int qt_movie(const char *format);

/* Fill *m from the body of a moov box (n bytes at p; a box cut short is
 * read as far as it goes). */
void qt_moov(const uint8_t *p, size_t n, struct x_meta *m);

/* The first moov box among the top-level boxes of the n bytes at p: read by
 * qt_moov when whole (m->pics.moov_read then set), or when m->pics.whole
 * (a file cut short), else left to qt_catch. */
void qt_parse(const uint8_t *p, size_t n, struct x_meta *m);

/* The streamed catch: qt_catch_new (NULL: out of memory) for a file of
 * file_size bytes; qt_catch_feed with every chunk in order from the file's
 * first byte, returns 1 while it wants more, 0 once moov is complete (or the
 * structure is broken: the rest cannot be followed); qt_catch_end parses
 * what was caught into *m, warns when there was no complete moov, frees, and
 * returns SL_OK, or SL_E_NOMEM when the copy could not grow (then *m lacks
 * what it would have held: an error, so the file is read again).
 * qt_catch_free(NULL) is a no-op. */
struct qt_catch;
struct qt_catch *qt_catch_new(uint64_t file_size);
int qt_catch_feed(struct qt_catch *c, const uint8_t *p, size_t n);
int qt_catch_end(struct qt_catch *c, struct x_meta *m);
/* For a reader that reads only what the catch wants (scan --quick): the
 * offset of the next byte it wants, the end of the box it is skipping
 * (media data, sample tables) or where it is; UINT64_MAX once it wants
 * nothing more.  qt_catch_feed_at feeds n bytes at off: bytes before the
 * ones fed already are dropped; a gap up to qt_catch_next is skipped as if
 * fed, past it the catch ends (returns 0: the reader did not follow it).
 * Skipping changes no field: the fuzz target qt compares both ways. */
uint64_t qt_catch_next(const struct qt_catch *c);
int qt_catch_feed_at(struct qt_catch *c, uint64_t off, const uint8_t *p, size_t n);
void qt_catch_free(struct qt_catch *c);

#endif
