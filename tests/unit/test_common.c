/* Error classes, string buffers, JSON escaping, FILETIME conversion, which
 * paths lie under a root, the sizes and numbers a user types. */
#include <errno.h>

#include "common/err.h"
#include "common/parse.h"
#include "common/strbuf.h"
#include "common/sys.h"
#include "common/win.h" /* win_filetime_ns is inline arithmetic: tested everywhere */
#include "tests/unit/test.h"

static void test_err(void)
{
	struct sl_err e;
	int rc = SL_FAIL(&e, SL_E_IO, ENOENT, "open '%s'", "/x");
	CHECK_INT(rc, SL_E_IO);
	CHECK(strstr(e.msg, "open '/x': ") == e.msg);
	CHECK(strstr(e.msg, "No such file") != NULL);
	CHECK_INT(e.sys, ENOENT);
	CHECK(e.line > 0 && strstr(e.file, "test_common.c") != NULL);
	CHECK_INT(sl_errno_class(EMFILE), SL_E_RESOURCE);
	CHECK_INT(sl_errno_class(ENOSPC), SL_E_RESOURCE);
	CHECK_INT(sl_errno_class(EACCES), SL_E_IO);
	CHECK(sl_code_is_fatal(SL_E_DB));
	CHECK(!sl_code_is_fatal(SL_E_CORRUPT));
	CHECK_STR(sl_code_name(SL_E_CORRUPT), "corrupt");
	CHECK_STR(sl_code_name(99), "unknown");
	sl_err_clear(&e);
	CHECK_INT(e.code, SL_OK);
	CHECK_INT(SL_FAIL(NULL, SL_E_DB, 0, "x"), SL_E_DB);
}

static void test_strbuf(void)
{
	struct strbuf sb = STRBUF_INIT;
	int i;
	for (i = 0; i < 1000; i++)
		sb_addf(&sb, "%d,", i);
	CHECK(sb.len > 3000);
	CHECK(strncmp(sb.p, "0,1,2,", 6) == 0);
	CHECK_INT(sb.p[sb.len], 0);
	sb_reset(&sb);
	CHECK_INT(sb.len, 0);
	CHECK_STR(sb.p, "");
	sb_free(&sb);
	sb_free(&sb); /* twice is harmless */
}

static void test_json(void)
{
	struct strbuf sb = STRBUF_INIT;
	const char raw[] = "a\"b\\c\n\x01 \xc3\xa9 \xff\xfe end";
	sb_add_json(&sb, raw, sizeof(raw) - 1);
	CHECK_STR(sb.p, "\"a\\\"b\\\\c\\n\\u0001 \xc3\xa9 \\u00ff\\u00fe end\"");
	sb_reset(&sb);
	/* an overlong encoding and a lone continuation byte are not UTF-8 */
	sb_add_json(&sb, "\xc0\xaf\x80", 3);
	CHECK_STR(sb.p, "\"\\u00c0\\u00af\\u0080\"");
	sb_reset(&sb);
	sb_add_json(&sb, "\xf0\x9f\x93\xb7", 4); /* camera emoji stays */
	CHECK_STR(sb.p, "\"\xf0\x9f\x93\xb7\"");
	sb_free(&sb);
}

static void test_grow(void)
{
	int *v = NULL;
	size_t cap = 0;
	CHECK_INT(sl_grow(&v, &cap, 10, sizeof(*v)), 0);
	CHECK(cap >= 10);
	v[9] = 42;
	CHECK_INT(sl_grow(&v, &cap, 5, sizeof(*v)), 0); /* no shrink */
	CHECK_INT(v[9], 42);
	CHECK_INT(sl_grow(&v, &cap, SIZE_MAX / 2, sizeof(*v)), -1);
	CHECK_INT(v[9], 42);
	free(v);
}

/* FILETIME 0 is common (FAT, the change journal) and times outside
 * 1677..2262 are legal on NTFS: neither may overflow.  Every expected value
 * is worked out by hand in the comment beside it (FILETIME: 100 ns units
 * since 1601-01-01; 1970 is 116444736000000000 of them; a signed 64-bit ns
 * count holds 92233720368547758 such units either side of 1970, so the
 * clamp is that times 100). */
static void test_filetime(void)
{
	const uint64_t epoch = 116444736000000000ull;
	const int64_t edge = 9223372036854775800ll; /* 92233720368547758 * 100 */

	CHECK(win_filetime_ns(0) == 0);       /* never set: "not known" */
	CHECK(win_filetime_ns(epoch) == 0);   /* 1970-01-01T00:00:00Z */
	CHECK(win_filetime_ns(epoch + 1) == 100);
	CHECK(win_filetime_ns(epoch - 1) == -100);
	/* 2000-01-01T00:00:00Z: 946684800 s after 1970 */
	CHECK(win_filetime_ns(125911584000000000ull) == 946684800000000000ll);
	/* 2024-01-01T00:00:00Z */
	CHECK(win_filetime_ns(epoch + 17040672000000000ull) == 1704067200000000000ll);
	/* 1601: the first unit, and a second in; 11644473600 s before 1970
	 * do not fit */
	CHECK(win_filetime_ns(1) == -edge);
	CHECK(win_filetime_ns(10000000ull) == -edge);
	/* 1677-09-22T00:00:00Z, inside the range: 106751 days before 1970,
	 * -9223286400 s */
	CHECK(win_filetime_ns(24211872000000000ull) == -9223286400000000000ll);
	/* 1677-09-21T00:00:00Z is outside (-9223372800 s): clamped */
	CHECK(win_filetime_ns(24211008000000000ull) == -edge);
	/* the lower edge itself (1677-09-21T00:12:43.1452242Z), one unit
	 * inside, one outside */
	CHECK(win_filetime_ns(24211015631452242ull) == -edge);
	CHECK(win_filetime_ns(24211015631452243ull) == -edge + 100);
	CHECK(win_filetime_ns(24211015631452241ull) == -edge);
	/* 2262-04-11T00:00:00Z, inside: 106751 days after 1970, 9223286400 s */
	CHECK(win_filetime_ns(208677600000000000ull) == 9223286400000000000ll);
	/* 2262-04-12T00:00:00Z, outside: clamped */
	CHECK(win_filetime_ns(208678464000000000ull) == edge);
	/* the upper edge (2262-04-11T23:47:16.8547758Z) and its neighbours */
	CHECK(win_filetime_ns(208678456368547758ull) == edge);
	CHECK(win_filetime_ns(208678456368547757ull) == edge - 100);
	CHECK(win_filetime_ns(208678456368547759ull) == edge);
	/* 30828-09-14T02:48:05.4775807Z, the largest FILETIME Windows
	 * converts (FileTimeToSystemTime), and all 64 bits set */
	CHECK(win_filetime_ns(0x7fffffffffffffffull) == edge);
	CHECK(win_filetime_ns(UINT64_MAX) == edge);
	CHECK(win_filetime_ns(2) <= win_filetime_ns(epoch / 2));
}

static size_t under(const char *path, const char *root)
{
	size_t n = 99;
	CHECK_INT(sys_path_prefix(path, root, &n), 0);
	return n;
}

/* Which paths the change journal lists are under a root: on a name's
 * boundary, and with or without case as the platform compares names
 * (Unicode cases: test_win). */
static void test_path_prefix(void)
{
	CHECK_INT(under("D:/Photos/a.jpg", "D:/Photos"), 9);
	CHECK_INT(under("D:/Photos/2024/a.jpg", "D:/Photos"), 9);
	CHECK_INT(under("D:/Photos", "D:/Photos"), 9);
	CHECK_INT(under("D:/Photos2/a.jpg", "D:/Photos"), 0);
	CHECK_INT(under("D:/Pho", "D:/Photos"), 0);
	CHECK_INT(under("D:/Other/a.jpg", "D:/Photos"), 0);
	CHECK_INT(under("C:/a.jpg", "C:/"), 3);
	CHECK_INT(under("/srv/a.jpg", "/"), 1);
	CHECK_INT(under("/srv/a.jpg", ""), 0);
	CHECK_INT(under("//srv/share/a.jpg", "//srv/share"), 11);
	/* another case: the same folder only where names fold case */
	CHECK_INT(under("d:/photos/a.jpg", "D:/Photos"), sys_names_fold_case() ? 9 : 0);
	CHECK_INT(under("D:/PHOTOS", "D:/Photos"), sys_names_fold_case() ? 9 : 0);
	CHECK_INT(under("D:/PHOTOS2/a.jpg", "D:/Photos"), 0);
}

/* Every form the usage and configuration documents give, and what is
 * refused whole, leaving the output as it was. */
static void test_parse(void)
{
	static const struct {
		const char *s;
		int ok;
		uint64_t v;
	} sizes[] = {
		{"4096", 1, 4096},         {"64K", 1, 64u << 10},   {"64k", 1, 64u << 10},
		{"64M", 1, 64u << 20},     {"64MB", 1, 64u << 20},  {"64MiB", 1, 64u << 20},
		{"1G", 1, 1u << 30},       {"2g", 1, 2ull << 30},   {"0", 1, 0},
		{"", 0, 0},                {"M", 0, 0},             {"-1", 0, 0},
		{" 1", 0, 0},              {"+1", 0, 0},            {"1x", 0, 0},
		{"1MBB", 0, 0},            {"1 M", 0, 0},           {"17179869184G", 0, 0},
		{"99999999999999999999", 0, 0},
	};
	uint64_t v;
	long l;
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		v = 12345;
		CHECK_INT(parse_size(sizes[i].s, &v), sizes[i].ok ? 0 : -1);
		CHECK(v == (sizes[i].ok ? sizes[i].v : 12345));
	}
	l = 7;
	CHECK_INT(parse_long("42", 0, 100, &l), 0);
	CHECK_INT(l, 42);
	CHECK_INT(parse_long("-3", -5, 5, &l), 0);
	CHECK_INT(l, -3);
	l = 7;
	CHECK_INT(parse_long("", 0, 100, &l), -1);
	CHECK_INT(parse_long("101", 0, 100, &l), -1);
	CHECK_INT(parse_long("4x", 0, 100, &l), -1);
	CHECK_INT(parse_long("99999999999999999999999", 0, 100, &l), -1);
	CHECK_INT(l, 7);
}

int main(void)
{
	RUN(test_parse);
	RUN(test_filetime);
	RUN(test_path_prefix);
	RUN(test_err);
	RUN(test_strbuf);
	RUN(test_json);
	RUN(test_grow);
	return t_done();
}
