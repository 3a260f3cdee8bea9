/* xmp.h - the fields photo libraries write into XMP packets.
 *
 * An XMP packet is RDF/XML.  It is parsed by expat (Debian's libexpat, a
 * real XML parser: namespaces by URI, not by the prefix a writer chose;
 * UTF-8 or UTF-16) on the bytes the caller already holds.  What is read,
 * from the properties of the top-level rdf:Description elements (as
 * elements or as attributes):
 *   xmp:Rating (-1..5), xmp:Label, dc:title, dc:description, dc:rights
 *   (language alternatives: x-default, else the first), dc:creator and
 *   dc:subject (every item, in order; a plain text value counts as one),
 *   lr:hierarchicalSubject ("A|B|C") and digiKam:TagsList ("A/B/C", turned
 *   into "A|B|C").
 * Everything goes to desc.h under the source the caller names (the packet
 * in a file, or a sidecar).  From a file's own packet, not a sidecar's,
 * also a motion photo's movie length (x_meta.embedded_video): when
 * GCamera:MotionPhoto is 1 (the current format), the Item:Length of the
 * Container:Item whose Item:Semantic is MotionPhoto, else, when
 * GCamera:MicroVideo is 1 (the first format), GCamera:MicroVideoOffset
 * (x_extract checks it against the file).
 *
 * The packet is hostile input: a DOCTYPE (where entity declarations live,
 * and with them the "billion laughs") is refused outright, no external
 * entity is ever fetched, elements nest at most XMP_MAX_DEPTH deep and a
 * value's text is bounded.  A packet that is not well-formed keeps the
 * values completed before the error, with a warning; bytes after the root
 * element (padding, NULs) are ignored. */
#ifndef SL_XMP_H
#define SL_XMP_H

#include <stddef.h>
#include <stdint.h>

#include "indexer/formats/desc.h"

#define XMP_MAX_DEPTH 64

/* Read the n-byte packet at p into m's descriptive fields as src.
 * Returns SL_OK (damage is a warning) or SL_E_NOMEM. */
int xmp_parse(const uint8_t *p, size_t n, struct x_meta *m, enum desc_src src);

/* The JPEG APP1 segment header that marks an XMP packet (29 bytes with
 * its NUL). */
#define XMP_JPEG_SIG "http://ns.adobe.com/xap/1.0/"

#endif
