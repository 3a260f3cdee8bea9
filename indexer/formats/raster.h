/* raster.h - perceptual hashes of PNG and WebP pictures, decoded by
 * Debian's libpng and libwebp where the build has them (raster_libs.c;
 * raster_none.c otherwise, as on the Windows build, which then says so).
 *
 * A PNG or WebP of a photo is a copy made for the web or by an editor:
 * hashed so that `dupes --near` groups it with the JPEG or RAW it came
 * from.  Neither format carries a small picture of itself, so the whole
 * image is decoded: PNG row by row into the hash's grid (libpng expands
 * the samples; grey is integer BT.601 luma of the stored values, as a
 * JPEG's Y, transparency composited on white, as viewers and exports show
 * it),
 * WebP scaled by libwebp while decoding so that its shorter side is
 * RASTER_SIDE (its rescaler averages areas, as the hash's grid does) and
 * its luma plane taken as is.  Pictures over RASTER_MAX_PIXELS are not
 * decoded: the cost is per pixel, and both formats compress flat areas so
 * well that a file's size bounds nothing.  An APNG is hashed by its first
 * frame; an animated WebP is not hashed (libwebp's simple decoder refuses
 * animations).
 */
#ifndef SL_RASTER_H
#define SL_RASTER_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define RASTER_MAX_PIXELS (50u * 1000u * 1000u)
#define RASTER_SIDE 256u

/* The hash (phash.h) of the PNG (format "png") or WebP ("webp") picture in
 * the n bytes at p, turned by orientation (EXIF's 1-8: as it is shown);
 * *src is "image".  Returns SL_OK; SL_E_UNSUPPORTED (no decoder in this
 * build, an animation, a picture too big); SL_E_CORRUPT; SL_E_NOMEM. */
int raster_phash(const char *format, const uint8_t *p, size_t n, int orientation, uint64_t *out,
		 const char **src, struct sl_err *err);

/* 1 when this build decodes PNG and WebP, 0 when raster_phash always says
 * it cannot. */
int raster_decodes(void);

#endif
