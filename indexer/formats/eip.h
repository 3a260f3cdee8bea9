/* eip.h - ZIP archives, and Capture One's Enhanced Image Package (EIP):
 * a ZIP holding a RAW file with its settings.
 *
 * An EIP is a ZIP with a member CaptureOne/.../NAME.cos (exiftool's rule,
 * ZIP.pm); any other ZIP is format "zip" with no fields.  The record of an
 * EIP carries what its image says: the first member in the archive's root
 * whose bytes are a format we read (sniffed, never named: exiftool reads
 * only members named .iiq, .jpg or .tif, so an EIP holding a NEF gets no
 * camera fields from it, and gets them from us), read from its first
 * EIP_HEAD bytes by that format's parser as the head of a streamed file.
 * That read is the dispatcher's (x_meta.read_nested, fmt.h): this walker
 * only finds the image; a record begun without the dispatcher (NULL) gets
 * format "eip" and none of the image's fields.  The settings (.cos) are
 * not read.
 *
 * Members are followed by their local headers, front to back, never by
 * the central directory at the end: a file held whole and one streamed
 * past go through the same walk (the whole file is fed as one chunk), so
 * both give the same record, and no byte is read twice.  A member is
 * stored or deflated (inflated only as far as its head, or through when
 * its sizes follow its data and it is one of the package's small settings
 * files; THROUGH_MAX over the archive); a member whose sizes follow its
 * data and that cannot be inflated through ends the walk, with a warning,
 * as do any bytes that are no member header.  A stored member whose sizes
 * follow its data ends at the descriptor whose sizes and CRC match the
 * bytes passed.  ZIP64 sizes are read, and a member with a ZIP64 extra
 * field has a ZIP64 descriptor.  An image longer than EIP_HEAD is read as
 * the head of a file of its member's true size.  Warnings name the byte
 * where the member's header starts: the same however the bytes come. */
#ifndef SL_EIP_H
#define SL_EIP_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "indexer/formats/fmt.h"

#define EIP_HEAD ((size_t)2 << 20)

/* A file held whole: walked here; the head of a streamed one: only
 * named "zip" (the catch walks it). */
int zip_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err);

/* The walk, fed every chunk in order from the file's first byte:
 * eip_catch_feed returns 1 while it wants more, 0 once the members end
 * (or cannot be followed); eip_catch_end fills *m (format, and the
 * image's fields when an EIP), frees, and returns SL_OK or SL_E_NOMEM.
 * eip_catch_new returns NULL when out of memory; eip_catch_free(NULL) is
 * a no-op. */
struct eip_catch;
struct eip_catch *eip_catch_new(uint64_t file_size);
int eip_catch_feed(struct eip_catch *c, const uint8_t *p, size_t n);
int eip_catch_end(struct eip_catch *c, struct x_meta *m);
void eip_catch_free(struct eip_catch *c);

#endif
