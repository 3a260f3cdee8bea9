/* exifw.h - a minimal EXIF (TIFF) writer for generated test photos.
 * Independent of the reader in indexer/formats/exif.c on purpose: tests compare what
 * one wrote with what the other read. */
#ifndef SL_EXIFW_H
#define SL_EXIFW_H

#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

struct exifw_in {
	int big_endian;
	const char *make, *model, *lens_model, *software;
	const char *datetime;             /* "YYYY:MM:DD HH:MM:SS" */
	const char *modified;             /* ModifyDate, when not datetime (an edit) */
	const char *offset, *offset_original; /* OffsetTime, OffsetTimeOriginal; NULL: none */
	const char *subsec_original;      /* SubSecTimeOriginal; NULL: none */
	int orientation;                  /* 1..8 */
	uint32_t exp_num, exp_den;        /* ExposureTime */
	uint32_t fnum_num, fnum_den;      /* FNumber */
	uint32_t focal_num, focal_den;    /* FocalLength */
	uint32_t iso;
	uint32_t pixel_w, pixel_h;
	int has_gps;
	uint32_t lat[3][2], lon[3][2];    /* degrees, minutes, seconds as rationals */
	char lat_ref, lon_ref;            /* 'N'/'S', 'E'/'W' */
	const uint8_t *thumb;             /* JPEG thumbnail for IFD1, or NULL */
	size_t thumb_len;
};

/* Append the TIFF block (what follows "Exif\0\0" in APP1) to out.
 * Returns 0, or -1 when out ran out of memory. */
int exifw_build(const struct exifw_in *in, struct strbuf *out);

#endif
