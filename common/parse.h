/* parse.h - the numbers a user types, on the command line and in the
 * configuration file, read one way in both.
 *
 * Each takes the whole string: trailing text, an empty string or a value
 * out of range is an error (-1) and leaves *out alone; 0 on success. */
#ifndef SL_PARSE_H
#define SL_PARSE_H

#include <stdint.h>

/* A size in bytes: "4096", "64K", "64M", "1G", also written "64MB",
 * "64MiB" (binary units either way). */
int parse_size(const char *s, uint64_t *out);

/* A whole decimal number in [lo, hi]. */
int parse_long(const char *s, long lo, long hi, long *out);

#endif
