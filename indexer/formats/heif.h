/* heif.h - perceptual hashes of HEIF pictures (HEIC, AVIF), decoded by
 * libheif where the build has it (heif_libheif.c; heif_none.c otherwise,
 * as on the Windows build, which then says so).
 *
 * HEVC and AV1 are not formats to decode by hand: libheif is Debian's
 * (with libde265 and dav1d/libaom as its decoders).  The picture is the
 * primary image's smallest thumbnail item of 64 pixels or more (an
 * iPhone's is 320x240: about 13 ms), else the primary image itself when it
 * is no bigger than HEIF_MAX_PIXELS (a decode costs per pixel, and HEVC
 * and AV1 compress so well that file size bounds nothing).  libheif applies the images' own rotation and
 * mirroring (irot, imir), so the hash is of the picture as shown.
 */
#ifndef SL_HEIF_H
#define SL_HEIF_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define HEIF_MAX_PIXELS (4u * 1000u * 1000u)

/* Load the decoder library's plugins now (pipeline.h, px_prepare). */
void heif_prepare(void);

/* The hash (phash.h) of the HEIF file in the n bytes at p; *src says from
 * what ("heif-thumbnail", "image").  Returns SL_OK; SL_E_UNSUPPORTED (no
 * decoder in this build, a codec libheif lacks, a picture too big);
 * SL_E_CORRUPT; SL_E_NOMEM. */
int heif_phash(const uint8_t *p, size_t n, uint64_t *out, const char **src, struct sl_err *err);

#endif
