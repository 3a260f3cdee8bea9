/* The change-journal record parser on synthetic FSCTL_READ_USN_JOURNAL
 * answers: versions 2 and 3, reasons, UTF-16 names with surrogates, and
 * malformed records (lengths, offsets, alignment, versions). */
#include "scanner/usn.h"
#include "tests/unit/test.h"

static void put16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* Append a version 3 record with whole 128-bit references. */
static size_t rec3(unsigned char *buf, size_t at, struct fileid ref, struct fileid parent,
		   uint32_t reason, uint32_t attrs)
{
	size_t len = (76 + 2 + 7) / 8 * 8;
	unsigned char *p = buf + at;

	memset(p, 0, len);
	put32(p, (uint32_t)len);
	put16(p + 4, 3);
	put64(p + 8, ref.lo);
	put64(p + 16, ref.hi);
	put64(p + 24, parent.lo);
	put64(p + 32, parent.hi);
	put32(p + 56, reason);
	put32(p + 68, attrs);
	put16(p + 72, 2);
	put16(p + 74, 76);
	put16(p + 76, 'r');
	return at + len;
}

/* Append a record; name is UTF-16 units.  Returns the new length. */
static size_t rec(unsigned char *buf, size_t at, unsigned major, uint64_t ref, uint64_t parent,
		  int64_t usn, uint32_t reason, uint32_t attrs, const uint16_t *name, size_t n)
{
	size_t fixed = major == 2 ? 60 : 76, len = (fixed + 2 * n + 7) / 8 * 8, i;
	unsigned char *p = buf + at;

	memset(p, 0, len);
	put32(p, (uint32_t)len);
	put16(p + 4, major);
	put64(p + 8, ref);
	if (major == 2) {
		put64(p + 16, parent);
		put64(p + 24, (uint64_t)usn);
		put32(p + 40, reason);
		put32(p + 52, attrs);
		put16(p + 56, (unsigned)(2 * n));
		put16(p + 58, 60);
	} else {
		put64(p + 16, 0x1234); /* high half of the 128-bit reference */
		put64(p + 24, parent);
		put64(p + 40, (uint64_t)usn);
		put32(p + 56, reason);
		put32(p + 68, attrs);
		put16(p + 72, (unsigned)(2 * n));
		put16(p + 74, 76);
	}
	for (i = 0; i < n; i++)
		put16(p + fixed + 2 * i, name[i]);
	return at + len;
}

struct seen {
	int n;
	char names[8][64];
	enum usn_kind kinds[8];
	uint64_t refs[8][2];
	unsigned majors[8];
	int stop_at;
};

static int collect(const struct usn_rec *r, void *ctx)
{
	struct seen *s = ctx;
	if (s->n == s->stop_at)
		return 7;
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", r->name);
	s->kinds[s->n] = usn_kind(r->reason);
	s->refs[s->n][0] = r->file_ref[0];
	s->refs[s->n][1] = r->file_ref[1];
	s->majors[s->n] = r->major;
	s->n++;
	return 0;
}

static void test_records(void)
{
	static const uint16_t a[] = {'a', '.', 'j', 'p', 'g'};
	/* "é😀.jpg": a BMP character, a surrogate pair */
	static const uint16_t b[] = {0xE9, 0xD83D, 0xDE00, '.', 'j', 'p', 'g'};
	static const uint16_t lone[] = {'x', 0xD800, 'y'};
	unsigned char buf[1024];
	struct seen s = {0};
	int64_t next = 0;
	size_t at = 8, bad;

	put64(buf, 777);
	at = rec(buf, at, 2, 42, 5, 100, USN_R_FILE_CREATE | USN_R_CLOSE, 0x20, a, 5);
	at = rec(buf, at, 3, 43, 5, 101, USN_R_DATA_EXTEND, 0x20, b, 7);
	at = rec(buf, at, 2, 44, 5, 102, USN_R_RENAME_NEW_NAME, 0x10, lone, 3);
	at = rec(buf, at, 2, 45, 5, 103, USN_R_FILE_DELETE | USN_R_CLOSE, 0x20, a, 5);
	at = rec(buf, at, 2, 46, 5, 104, 0x00000800 /* security change */, 0x20, a, 5);
	s.stop_at = -1;
	CHECK_INT(usn_parse(buf, at, &next, collect, &s, &bad), 0);
	CHECK_INT(next, 777);
	CHECK_INT(s.n, 5);
	CHECK_STR(s.names[0], "a.jpg");
	CHECK_INT(s.kinds[0], USN_CREATED);
	CHECK_STR(s.names[1], "\xc3\xa9\xf0\x9f\x98\x80.jpg");
	CHECK_INT(s.kinds[1], USN_CHANGED);
	CHECK_INT(s.majors[1], 3);
	CHECK_INT(s.refs[1][0], 43);
	CHECK_INT(s.refs[1][1], 0x1234);
	CHECK_STR(s.names[2], "x\xef\xbf\xbdy"); /* lone surrogate -> U+FFFD */
	CHECK_INT(s.kinds[2], USN_RENAMED);
	CHECK_INT(s.kinds[3], USN_DELETED);
	CHECK_INT(s.kinds[4], USN_OTHER);

	/* the callback can stop the walk */
	memset(&s, 0, sizeof(s));
	s.stop_at = 1;
	CHECK_INT(usn_parse(buf, at, &next, collect, &s, &bad), 7);
	CHECK_INT(s.n, 1);

	/* only the next USN: no records */
	memset(&s, 0, sizeof(s));
	s.stop_at = -1;
	CHECK_INT(usn_parse(buf, 8, &next, collect, &s, &bad), 0);
	CHECK_INT(s.n, 0);
}

static void test_malformed(void)
{
	static const uint16_t a[] = {'a', 'b'};
	unsigned char buf[512], copy[512];
	struct seen s = {0};
	int64_t next;
	size_t at, first, bad;

	s.stop_at = -1;
	put64(buf, 1);
	first = rec(buf, 8, 2, 1, 2, 3, USN_R_FILE_CREATE, 0, a, 2);
	at = rec(buf, first, 2, 1, 2, 3, USN_R_FILE_CREATE, 0, a, 2);
	CHECK_INT(usn_parse(buf, 4, &next, collect, &s, &bad), -1);

	memcpy(copy, buf, at);
	put32(copy + first, 4); /* shorter than a header */
	CHECK_INT(usn_parse(copy, at, &next, collect, &s, &bad), -1);
	CHECK_INT(bad, first);

	memcpy(copy, buf, at);
	put32(copy + first, 1000); /* past the buffer */
	CHECK_INT(usn_parse(copy, at, &next, collect, &s, &bad), -1);

	memcpy(copy, buf, at);
	put32(copy + first, 66); /* not 8-byte aligned */
	CHECK_INT(usn_parse(copy, at, &next, collect, &s, &bad), -1);

	memcpy(copy, buf, at);
	put16(copy + first + 58, 62); /* name runs past the record */
	CHECK_INT(usn_parse(copy, at, &next, collect, &s, &bad), -1);

	memcpy(copy, buf, at);
	put16(copy + first + 56, 3); /* odd name length */
	CHECK_INT(usn_parse(copy, at, &next, collect, &s, &bad), -1);

	memcpy(copy, buf, at);
	put16(copy + first + 58, 10); /* name inside the header */
	CHECK_INT(usn_parse(copy, at, &next, collect, &s, &bad), -1);

	memcpy(copy, buf, at);
	put16(copy + first + 4, 9); /* unknown version */
	CHECK_INT(usn_parse(copy, at, &next, collect, &s, &bad), -1);

	memcpy(copy, buf, at);
	put16(copy + first + 4, 4); /* version 4 (ranges): skipped */
	s.n = 0;
	CHECK_INT(usn_parse(copy, at, &next, collect, &s, &bad), 0);
	CHECK_INT(s.n, 1);

	/* trailing garbage shorter than a record header */
	s.n = 0;
	CHECK_INT(usn_parse(buf, at + 4, &next, collect, &s, &bad), -1);
	CHECK_INT(bad, at);
}

static void test_tally(void)
{
	static const uint16_t a[] = {'a'};
	unsigned char buf[1024];
	struct usn_tally t;
	uint64_t ours = 77; /* the index's folder */
	int64_t next;
	size_t at = 8, bad;

	put64(buf, 500);
	/* the index writing its WAL and lock in its own folder */
	at = rec(buf, at, 2, 10, ours, 1, USN_R_DATA_EXTEND, 0x20, a, 1);
	at = rec(buf, at, 2, 11, ours, 2, USN_R_FILE_CREATE, 0x20, a, 1);
	at = rec(buf, at, 2, 11, ours, 3, USN_R_FILE_DELETE, 0x20, a, 1);
	/* a photo's attributes touched: nothing to read again */
	at = rec(buf, at, 2, 12, 5, 4, 0x00008000 /* BASIC_INFO_CHANGE */, 0x20, a, 1);
	memset(&t, 0, sizeof(t));
	CHECK_INT(usn_tally(buf, at, &ours, 1, &t, &next, &bad), 0);
	CHECK_INT(next, 500);
	CHECK_INT(t.records, 4);
	CHECK_INT(t.ignored, 3);
	CHECK_INT(t.other, 1);
	CHECK(usn_quiet(&t));
	/* then a photo renamed elsewhere on the volume */
	at = rec(buf, at, 2, 13, 5, 5, USN_R_RENAME_NEW_NAME, 0x20, a, 1);
	memset(&t, 0, sizeof(t));
	CHECK_INT(usn_tally(buf, at, &ours, 1, &t, &next, &bad), 0);
	CHECK_INT(t.renamed, 1);
	CHECK(!usn_quiet(&t));
	/* without the ignore list our own writes are changes too */
	memset(&t, 0, sizeof(t));
	CHECK_INT(usn_tally(buf, at, NULL, 0, &t, &next, &bad), 0);
	CHECK_INT(t.created, 1);
	CHECK_INT(t.deleted, 1);
	CHECK_INT(t.changed, 1);
}

static void test_collect(void)
{
	static const uint16_t a[] = {'a'};
	unsigned char buf[2048];
	struct usn_tally t;
	int64_t next;
	size_t at = 8, bad;

	put64(buf, 900);
	/* a new folder with two new photos, one photo edited in place */
	at = rec(buf, at, 2, 50, 5, 1, USN_R_FILE_CREATE, USN_ATTR_DIRECTORY, a, 1);
	at = rec(buf, at, 2, 51, 50, 2, USN_R_FILE_CREATE, 0x20, a, 1);
	at = rec(buf, at, 2, 51, 50, 3, USN_R_FILE_CREATE | USN_R_DATA_EXTEND, 0x20, a, 1);
	at = rec(buf, at, 2, 51, 50, 4, USN_R_FILE_CREATE | USN_R_DATA_EXTEND | USN_R_CLOSE, 0x20,
		 a, 1);
	at = rec(buf, at, 2, 52, 50, 5, USN_R_FILE_CREATE, 0x20, a, 1);
	at = rec(buf, at, 2, 12, 5, 6, USN_R_DATA_OVERWRITE, 0x20, a, 1);
	at = rec(buf, at, 2, 51, 50, 7, USN_R_DATA_EXTEND, 0x20, a, 1); /* again, later */
	memset(&t, 0, sizeof(t));
	t.max_ids = 10;
	CHECK_INT(usn_tally(buf, at, NULL, 0, &t, &next, &bad), 0);
	CHECK(usn_listable(&t));
	CHECK(!usn_quiet(&t));
	usn_ids_unique(&t);
	CHECK_INT(t.nids, 3); /* 12, 51, 52: not the folder, each once */
	CHECK(t.nids == 3 && t.ids[0].lo == 12 && t.ids[1].lo == 51 && t.ids[2].lo == 52);
	CHECK(t.nids == 3 && !t.ids[0].hi && !t.ids[1].hi && !t.ids[2].hi);
	usn_tally_free(&t);

	/* too many to list */
	memset(&t, 0, sizeof(t));
	t.max_ids = 2;
	CHECK_INT(usn_tally(buf, at, NULL, 0, &t, &next, &bad), 0);
	CHECK(t.overflow);
	CHECK(!usn_listable(&t));
	usn_tally_free(&t);

	/* a deletion or a rename: the walk must find out what happened */
	at = rec(buf, at, 2, 52, 50, 8, USN_R_RENAME_OLD_NAME, 0x20, a, 1);
	memset(&t, 0, sizeof(t));
	t.max_ids = 10;
	CHECK_INT(usn_tally(buf, at, NULL, 0, &t, &next, &bad), 0);
	CHECK(!usn_listable(&t));
	usn_tally_free(&t);

	/* not asked to collect: never listable */
	memset(&t, 0, sizeof(t));
	CHECK_INT(usn_tally(buf, 8 + 2 * 64, NULL, 0, &t, &next, &bad), 0);
	CHECK(!usn_listable(&t) && t.nids == 0);
}

/* ReFS: version 3 records whose references have an upper half, and whose
 * lower halves alone are not unique.  Both halves are collected and told
 * apart (they were cut to the lower half: two new photos became one, or
 * the wrong file was opened); the index's folder is recognised by its
 * folded ID, as sys_file_id gives it. */
static void test_refs_128(void)
{
	const struct fileid a = {0x1000, 7}, b = {0x1000, 8}, c = {0x2000, 7};
	const struct fileid dir = {0x500, 3}, ours = {0x77, 9};
	uint64_t ignore = fileid_fold(ours.lo, ours.hi);
	unsigned char buf[2048];
	struct usn_tally t;
	int64_t next;
	size_t at = 8, bad;

	put64(buf, 1);
	at = rec3(buf, at, a, dir, USN_R_FILE_CREATE, 0x20);
	at = rec3(buf, at, b, dir, USN_R_FILE_CREATE, 0x20);
	at = rec3(buf, at, a, dir, USN_R_FILE_CREATE | USN_R_DATA_EXTEND, 0x20);
	at = rec3(buf, at, c, dir, USN_R_DATA_OVERWRITE, 0x20);
	at = rec3(buf, at, b, dir, USN_R_DATA_EXTEND | USN_R_CLOSE, 0x20);
	/* the index's WAL, in its folder */
	at = rec3(buf, at, (struct fileid){0x78, 9}, ours, USN_R_DATA_EXTEND, 0x20);
	memset(&t, 0, sizeof(t));
	t.max_ids = 10;
	CHECK_INT(usn_tally(buf, at, &ignore, 1, &t, &next, &bad), 0);
	CHECK_INT(t.ignored, 1);
	CHECK(usn_listable(&t));
	usn_ids_unique(&t);
	CHECK_INT(t.nids, 3);
	CHECK(t.nids == 3 && t.ids[0].lo == a.lo && t.ids[0].hi == a.hi);
	CHECK(t.nids == 3 && t.ids[1].lo == c.lo && t.ids[1].hi == c.hi);
	CHECK(t.nids == 3 && t.ids[2].lo == b.lo && t.ids[2].hi == b.hi);
	usn_tally_free(&t);
	/* the lower half alone is another folder's: not ignored */
	ignore = ours.lo;
	memset(&t, 0, sizeof(t));
	CHECK_INT(usn_tally(buf, at, &ignore, 1, &t, &next, &bad), 0);
	CHECK_INT(t.ignored, 0);
	/* with no upper half the folded ID is the lower half, as on NTFS */
	CHECK(fileid_fold(0x77, 0) == 0x77);
}

/* Files whose data is not on this disk (cloud placeholders, offline
 * files): created or dehydrated, they are nothing to read, and reading one
 * downloads it.  They were listed and read. */
static void test_remote(void)
{
	const struct fileid dir = {5, 0};
	unsigned char buf[2048];
	struct usn_tally t;
	int64_t next;
	size_t at = 8, bad;

	put64(buf, 1);
	/* a OneDrive file made online-only, a new placeholder, an offline file
	 * written, and a cloud-only folder */
	at = rec3(buf, at, (struct fileid){60, 0}, dir, USN_R_DATA_TRUNCATION,
		  0x20 | 0x400 | 0x400000 /* RECALL_ON_DATA_ACCESS */);
	at = rec3(buf, at, (struct fileid){61, 0}, dir, USN_R_FILE_CREATE, 0x20 | 0x400000);
	at = rec3(buf, at, (struct fileid){62, 0}, dir, USN_R_DATA_OVERWRITE, 0x20 | 0x1000);
	at = rec3(buf, at, (struct fileid){63, 0}, dir, USN_R_FILE_CREATE, 0x10 | 0x40000);
	memset(&t, 0, sizeof(t));
	t.max_ids = 10;
	CHECK_INT(usn_tally(buf, at, NULL, 0, &t, &next, &bad), 0);
	CHECK_INT(t.remote, 4);
	CHECK_INT(t.created + t.changed, 0);
	CHECK_INT(t.nids, 0);
	CHECK(usn_quiet(&t));
	/* a file brought back (hydrated) is on the disk again: read it */
	at = rec3(buf, at, (struct fileid){60, 0}, dir, USN_R_DATA_EXTEND, 0x20 | 0x400);
	memset(&t, 0, sizeof(t));
	t.max_ids = 10;
	CHECK_INT(usn_tally(buf, at, NULL, 0, &t, &next, &bad), 0);
	CHECK_INT(t.remote, 4);
	CHECK_INT(t.changed, 1);
	CHECK(t.nids == 1 && t.ids[0].lo == 60);
	CHECK(usn_listable(&t) && !usn_quiet(&t));
	usn_tally_free(&t);
	/* deleting or renaming a placeholder still takes a walk */
	at = rec3(buf, at, (struct fileid){61, 0}, dir, USN_R_FILE_DELETE, 0x20 | 0x400000);
	memset(&t, 0, sizeof(t));
	CHECK_INT(usn_tally(buf, at, NULL, 0, &t, &next, &bad), 0);
	CHECK_INT(t.deleted, 1);
	CHECK(!usn_quiet(&t));
}

int main(void)
{
	RUN(test_records);
	RUN(test_collect);
	RUN(test_tally);
	RUN(test_malformed);
	RUN(test_refs_128);
	RUN(test_remote);
	return t_done();
}
