#include "common/parse.h"

#include <errno.h>
#include <stdlib.h>

int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;

	if (*s < '0' || *s > '9')
		return -1; /* strtoull would take "-1" or " 1" */
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k': case 'K': mult = 1024; end++; break;
	case 'm': case 'M': mult = 1024 * 1024; end++; break;
	case 'g': case 'G': mult = 1024ull * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end == 'i' && mult > 1)
		end++; /* "MiB" */
	if (*end == 'B')
		end++;
	if (*end != '\0' || (mult > 1 && v > UINT64_MAX / mult))
		return -1;
	*out = (uint64_t)v * mult;
	return 0;
}

int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}
