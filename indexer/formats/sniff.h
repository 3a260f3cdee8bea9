/* sniff.h - which format a file is, from its magic bytes, never its name.
 *
 * Apart from the dispatcher's table of parsers (extract.c) because a
 * parser asks it too: the ZIP walker (eip.h) sniffs each member's head to
 * find a package's image.  It knows every format's magic and no parser:
 * the ISO media brands and QuickTime's atoms it takes from bmff.c and qt.c,
 * which are below it. */
#ifndef SL_SNIFF_H
#define SL_SNIFF_H

#include <stddef.h>
#include <stdint.h>

/* The format family of a file whose first n bytes are at p: a static name
 * ("jpeg", "tiff", "heic"...; parsers.h's parser for it may refine it), or
 * "" when none is known. */
const char *x_sniff(const uint8_t *p, size_t n);

#endif
