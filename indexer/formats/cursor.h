/* cursor.h - bounds-checked reads from untrusted bytes.
 *
 * Every read names an absolute offset and size and is checked against the
 * buffer before any byte is touched; a read that would pass the end returns
 * -1 and sets the value to 0.  Parsers never index file bytes directly. */
#ifndef SL_CURSOR_H
#define SL_CURSOR_H

#include <stddef.h>
#include <stdint.h>

struct bc {
	const uint8_t *p;
	size_t len;
	int be; /* byte order for bc_u16/bc_u32: 1 big-endian, 0 little-endian */
};

static inline struct bc bc_make(const void *p, size_t len, int be)
{
	struct bc c;
	c.p = (const uint8_t *)p;
	c.len = len;
	c.be = be;
	return c;
}

/* Do n bytes from off lie inside the buffer?  Overflow-safe. */
static inline int bc_has(const struct bc *c, size_t off, size_t n)
{
	return off <= c->len && n <= c->len - off;
}

static inline int bc_u8(const struct bc *c, size_t off, uint8_t *v)
{
	if (!bc_has(c, off, 1)) {
		*v = 0;
		return -1;
	}
	*v = c->p[off];
	return 0;
}

static inline int bc_be16(const struct bc *c, size_t off, uint16_t *v)
{
	if (!bc_has(c, off, 2)) {
		*v = 0;
		return -1;
	}
	*v = (uint16_t)((c->p[off] << 8) | c->p[off + 1]);
	return 0;
}

static inline int bc_le16(const struct bc *c, size_t off, uint16_t *v)
{
	if (!bc_has(c, off, 2)) {
		*v = 0;
		return -1;
	}
	*v = (uint16_t)((c->p[off + 1] << 8) | c->p[off]);
	return 0;
}

static inline int bc_be32(const struct bc *c, size_t off, uint32_t *v)
{
	if (!bc_has(c, off, 4)) {
		*v = 0;
		return -1;
	}
	*v = ((uint32_t)c->p[off] << 24) | ((uint32_t)c->p[off + 1] << 16) |
	     ((uint32_t)c->p[off + 2] << 8) | c->p[off + 3];
	return 0;
}

static inline int bc_le32(const struct bc *c, size_t off, uint32_t *v)
{
	if (!bc_has(c, off, 4)) {
		*v = 0;
		return -1;
	}
	*v = ((uint32_t)c->p[off + 3] << 24) | ((uint32_t)c->p[off + 2] << 16) |
	     ((uint32_t)c->p[off + 1] << 8) | c->p[off];
	return 0;
}

static inline int bc_be64(const struct bc *c, size_t off, uint64_t *v)
{
	uint32_t hi, lo;
	if (bc_be32(c, off, &hi) || bc_be32(c, off + 4, &lo)) {
		*v = 0;
		return -1;
	}
	*v = ((uint64_t)hi << 32) | lo;
	return 0;
}

/* In the cursor's own byte order. */
static inline int bc_u16(const struct bc *c, size_t off, uint16_t *v)
{
	return c->be ? bc_be16(c, off, v) : bc_le16(c, off, v);
}

static inline int bc_u32(const struct bc *c, size_t off, uint32_t *v)
{
	return c->be ? bc_be32(c, off, v) : bc_le32(c, off, v);
}

/* Does the buffer hold the bytes of lit (length n) at off? */
static inline int bc_is(const struct bc *c, size_t off, const void *lit, size_t n)
{
	const uint8_t *l = (const uint8_t *)lit;
	size_t i;
	if (!bc_has(c, off, n))
		return 0;
	for (i = 0; i < n; i++)
		if (c->p[off + i] != l[i])
			return 0;
	return 1;
}

/* A sub-cursor over [off, off+n), or -1 if that range is not inside. */
static inline int bc_sub(const struct bc *c, size_t off, size_t n, struct bc *out)
{
	if (!bc_has(c, off, n))
		return -1;
	*out = bc_make(c->p + off, n, c->be);
	return 0;
}

#endif
