/* The Windows seams for real (under Wine in CI): path conversion, the walk
 * over Unicode and over-long names, identity and extents, the probe, the
 * reader, the lock, error text, roots in the disk's case and the journal's
 * list matched to them; and decisions Wine cannot provoke, on the numbers
 * Microsoft documents (reparse tags, background mode). */
/* before <windows.h>, whose `near` macro would empty db.h's field */
#include "app/scan.h"
#include "app/scanjn.h"

#include <windows.h>

#include "common/sys.h"
#include "common/win.h"
#include "common/wincall.h"
#include "indexer/reader.h"
#include "scanner/device.h"
#include "scanner/extents.h"
#include "scanner/journal.h"
#include "scanner/walk.h"
#include "tests/unit/test.h"

static char *dir;

static void test_paths(void)
{
	struct strbuf sb = STRBUF_INIT;
	wchar_t *w = win_path("C:/Photos/2024/\xc3\xa9t\xc3\xa9.jpg");

	CHECK(w && wcscmp(w, L"\\\\?\\C:\\Photos\\2024\\\x00e9t\x00e9.jpg") == 0);
	free(w);
	w = win_path("//server/share/a.jpg");
	CHECK(w && wcscmp(w, L"\\\\?\\UNC\\server\\share\\a.jpg") == 0);
	free(w);
	w = win_path("relative/x");
	CHECK(w && wcscmp(w, L"relative\\x") == 0);
	free(w);
	CHECK(win_path("bad\xff") == NULL); /* not UTF-8 */
	CHECK_INT(win_from_path(L"\\\\?\\D:\\a\\b", &sb), 0);
	CHECK_STR(sb.p, "D:/a/b");
	sb_reset(&sb);
	CHECK_INT(win_from_path(L"\\\\?\\UNC\\srv\\s\\x", &sb), 0);
	CHECK_STR(sb.p, "//srv/s/x");
	sb_free(&sb);
}

static void test_errors(void)
{
	char buf[200];

	CHECK_INT(win_errno(ERROR_FILE_NOT_FOUND), ENOENT);
	CHECK_INT(win_errno(ERROR_DISK_FULL), ENOSPC);
	CHECK_INT(win_errno(ERROR_SHARING_VIOLATION), WIN_SYS_BASE + ERROR_SHARING_VIOLATION);
	sys_strerror(win_errno(ERROR_SHARING_VIOLATION), buf, sizeof(buf));
	CHECK(strstr(buf, "(Windows error 32)") != NULL);
	sys_strerror(WIN_E_BOGUS_EXTENTS, buf, sizeof(buf));
	CHECK(strstr(buf, "extents unavailable") != NULL);
}

/* A tree: Unicode names, a folder nested past MAX_PATH, an empty file. */
static void make_tree(char *deep, size_t cap)
{
	char p[4096];
	int i;

	snprintf(p, sizeof(p), "%s/\xe5\x86\x99\xe7\x9c\x9f", dir); /* 写真 */
	CHECK_INT(t_mkdir(p), 0);
	snprintf(p, sizeof(p), "%s/\xe5\x86\x99\xe7\x9c\x9f/\xc3\xa9t\xc3\xa9 \xf0\x9f\x93\xb7.jpg", dir);
	t_write(p, "0123456789", 10);
	snprintf(p, sizeof(p), "%s/empty.jpg", dir);
	t_write(p, "", 0);
	snprintf(deep, cap, "%s", dir);
	for (i = 0; i < 6; i++) {
		size_t n = strlen(deep);
		snprintf(deep + n, cap - n, "/%s", "a-rather-long-folder-name-to-pass-max-path-0123456789");
		CHECK_INT(t_mkdir(deep), 0);
	}
	snprintf(p, sizeof(p), "%s/deep.jpg", deep);
	t_write(p, "deep!", 5);
}

static int has_file(const struct ftab *ft, const char *suffix, uint32_t *id)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i, n = strlen(suffix);
	int found = 0;

	for (i = 0; i < ft->nfiles && !found; i++) {
		sb_reset(&sb);
		ftab_path(ft, (uint32_t)i, &sb);
		if (sb.len >= n && strcmp(sb.p + sb.len - n, suffix) == 0) {
			found = 1;
			*id = (uint32_t)i;
		}
	}
	sb_free(&sb);
	return found;
}

static void test_walk_and_locate(void)
{
	char deep[4096], path[4096];
	struct walk_opts o = {0};
	struct walk_stats st = {0};
	struct ext_result r;
	struct sl_err e;
	struct ftab ft;
	uint32_t id = 0;
	struct strbuf sb = STRBUF_INIT;
	const struct anchor *at;

	make_tree(deep, sizeof(deep));
	CHECK(strlen(deep) > 300);
	ftab_init(&ft);
	CHECK_INT(t_walk_root(&ft, dir, &o, &st, &e), SL_OK);
	CHECK_INT(st.files, 3);
	CHECK_INT(st.dir_errors, 0);
	CHECK(has_file(&ft, "/\xe5\x86\x99\xe7\x9c\x9f/\xc3\xa9t\xc3\xa9 \xf0\x9f\x93\xb7.jpg", &id));
	/* as the scan opens it: below its root, held since the walk */
	at = ftab_at(&ft, id, &sb);
	CHECK(at != NULL);
	CHECK_INT(ext_stat(at, sb.p, &r, &e), SL_OK);
	CHECK_INT(r.size, 10);
	CHECK(r.mtime_ns > (int64_t)1500000000 * 1000000000);
	CHECK_INT(ext_locate(at, sb.p, EXT_ASK, EXT_WB_FILE, &r, NULL, &e), SL_OK);
	/* Wine answers retrieval pointers impossibly: refused, not believed */
	CHECK(r.flags & (FT_LOCATED | FT_NOEXT | FT_INLINE));
	if (r.flags & FT_NOEXT)
		fprintf(stderr, "  extents: none (sys %d)\n", r.noext_errno);
	CHECK(has_file(&ft, "/deep.jpg", &id));
	sb_reset(&sb);
	at = ftab_at(&ft, id, &sb);
	CHECK(at != NULL);
	CHECK_INT(ext_stat(at, sb.p, &r, &e), SL_OK);
	CHECK_INT(r.size, 5);
	CHECK(has_file(&ft, "/empty.jpg", &id));
	CHECK_INT(ext_stat(at, "missing.jpg", &r, &e), SL_E_IO);
	CHECK(strstr(e.msg, "No such file") != NULL);
	/* the fallback listing (FindFirstFileExW) finds the same files, without
	 * IDs until the stat pass */
	{
		struct ftab f2;
		struct walk_stats s2 = {0};
		size_t i;
		int same = 1;
		ftab_init(&f2);
		walk_force_fallback(1);
		CHECK_INT(t_walk_root(&f2, dir, &o, &s2, &e), SL_OK);
		walk_force_fallback(0);
		CHECK_INT(s2.files, st.files);
		CHECK_INT(f2.nfiles, ft.nfiles);
		for (i = 0; i < ft.nfiles && i < f2.nfiles; i++) {
			struct strbuf x = STRBUF_INIT, y = STRBUF_INIT;
			uint32_t k;
			ftab_path(&f2, (uint32_t)i, &y);
			sb_adds(&x, y.p + strlen(dir));
			if (!has_file(&ft, x.p, &k))
				same = 0;
			if (f2.files[i].ino != 0)
				same = 0;
			sb_free(&x);
			sb_free(&y);
		}
		CHECK(same);
		ftab_free(&f2);
	}
	/* a walk of a single file */
	ftab_free(&ft);
	ftab_init(&ft);
	snprintf(path, sizeof(path), "%s/deep.jpg", deep);
	memset(&st, 0, sizeof(st));
	CHECK_INT(t_walk_root(&ft, path, &o, &st, &e), SL_OK);
	CHECK_INT(st.files, 1);
	ftab_free(&ft);
	sb_free(&sb);
}

struct found {
	int n;
	char paths[4][600];
	uint64_t ids[4];
};

static int found_one(const char *p, uint64_t id, void *ctx)
{
	struct found *f = ctx;
	if (f->n < 4) {
		snprintf(f->paths[f->n], sizeof(f->paths[0]), "%s", p);
		f->ids[f->n] = id;
	}
	f->n++;
	return 0;
}

/* The change journal's list is resolved by file ID: IDs the walk saw come
 * back as the same paths; an ID that is not there is left out.  (Wine's
 * GetFinalPathNameByHandleW fails beyond MAX_PATH, so the deep file is
 * not used here; jn_paths then reports an error and the scan walks.) */
static void test_paths_by_id(void)
{
	struct walk_opts o = {0};
	struct walk_stats st = {0};
	struct strbuf sb = STRBUF_INIT;
	struct found f = {0};
	struct sl_err e;
	struct ftab ft;
	struct fileid ids[4];
	uint64_t dev;
	uint32_t a = 0, b = 0;
	char why[200], folder[4096];

	ftab_init(&ft);
	CHECK_INT(t_walk_root(&ft, dir, &o, &st, &e), SL_OK);
	CHECK(has_file(&ft, "/empty.jpg", &a));
	CHECK(has_file(&ft, "\xc3\xa9t\xc3\xa9 \xf0\x9f\x93\xb7.jpg", &b));
	memset(ids, 0, sizeof(ids));
	ids[0].lo = ft.files[a].ino;
	ids[1].lo = 0x7fffffffffffull; /* no such file */
	ids[2].lo = ft.files[b].ino;
	/* a folder: the walk does not read it, nor does the list */
	snprintf(folder, sizeof(folder), "%s/\xe5\x86\x99\xe7\x9c\x9f", dir);
	CHECK_INT(sys_file_id(folder, &dev, &ids[3].lo), 0);
	CHECK(ids[0].lo != 0 && ids[2].lo != 0);
	CHECK_INT(jn_paths(dir, ids, 4, found_one, &f, why, sizeof(why)), 0);
	CHECK_INT(f.n, 2);
	ftab_path(&ft, a, &sb);
	CHECK_STR(f.paths[0], sb.p);
	CHECK(f.ids[0] == ids[0].lo);
	sb_reset(&sb);
	ftab_path(&ft, b, &sb);
	CHECK_STR(f.paths[1], sb.p);
	sb_free(&sb);
	ftab_free(&ft);
}

/* Identities (win.h): a 128-bit file ID with a zero upper half is the
 * 64-bit index it always was, so NTFS indexes keep theirs; ReFS-style IDs
 * that share a lower half stay apart; volume GUIDs parse from the names
 * GetFinalPathNameByHandleW and FindFirstVolumeW give, and make devs no
 * serial can equal.  And on this machine, files' identities from the
 * handle agree with the walk's listing. */
static void test_identity(void)
{
	unsigned char id[16] = {0x78, 0x56, 0x34, 0x12, 0, 0, 0x05, 0}, id2[16], g[16], g2[16];
	const wchar_t *name = L"\\\\?\\Volume{0123abcd-89AB-cdef-0123-456789abcdef}\\Photos\\a.jpg";
	uint64_t d1, d2, dev, ino;
	struct walk_opts o = {0};
	struct walk_stats st = {0};
	struct strbuf sb = STRBUF_INIT;
	struct sl_err e;
	struct ftab ft;
	uint32_t a = 0;

	CHECK(win_fold_id(id) == 0x0005000012345678ull);
	memcpy(id2, id, 16);
	id2[15] = 1;
	id[15] = 2;
	CHECK(win_fold_id(id) != win_fold_id(id2));
	CHECK(win_fold_id(id) != 0x0005000012345678ull);
	CHECK(win_fold_id(id) == win_fold_id(id));

	CHECK_INT(win_volume_guid(name, g), 0);
	CHECK(g[0] == 0x01 && g[1] == 0x23 && g[2] == 0xab && g[3] == 0xcd && g[4] == 0x89 &&
	      g[5] == 0xab && g[15] == 0xef);
	CHECK_INT(win_volume_guid(L"\\\\?\\Volume{0123abcd-89AB-cdef-0123-456789abcdef}\\", g2), 0);
	CHECK(memcmp(g, g2, 16) == 0);
	CHECK_INT(win_volume_guid(L"\\\\?\\C:\\Photos", g2), -1);
	CHECK_INT(win_volume_guid(L"\\\\?\\Volume{0123abcd-89AB-cdef-0123-456789abcde}\\", g2), -1);
	CHECK_INT(win_volume_guid(L"\\\\?\\Volume{0123abcd+89AB-cdef-0123-456789abcdef}\\", g2), -1);
	CHECK_INT(win_volume_guid(L"\\\\?\\Volume{0123abcd-89AB-cdef-0123-456789abcdeg}\\", g2), -1);
	d1 = win_guid_dev(g);
	g[15] ^= 1;
	d2 = win_guid_dev(g);
	CHECK(d1 != d2 && (d1 >> 63) && (d2 >> 63));
	{
		char key[64];
		win_volume_key(L"C:\\", 0x1234ABCDul, key, sizeof(key));
		CHECK_STR(key, "serial:1234-ABCD"); /* no mounted volume shares it */
	}

	/* Wine's volumes do not share serials: devs stay serial numbers, and
	 * the handle's identity is the one the walk listed */
	ftab_init(&ft);
	CHECK_INT(t_walk_root(&ft, dir, &o, &st, &e), SL_OK);
	CHECK(has_file(&ft, "/empty.jpg", &a));
	ftab_path(&ft, a, &sb);
	CHECK_INT(sys_file_id(sb.p, &dev, &ino), 0);
	CHECK(dev >> 32 == 0 && !win_serial_shared((uint32_t)dev));
	CHECK(dev == ft.devs[ft.files[a].dev].st_dev);
	CHECK(ino == ft.files[a].ino);
	sb_free(&sb);
	ftab_free(&ft);
}

static size_t under(const char *path, const char *root)
{
	size_t n = 99;
	CHECK_INT(sys_path_prefix(path, root, &n), 0);
	return n;
}

/* Roots against the journal's paths without case, as NTFS compares names:
 * beyond ASCII, with the length counted in the path's own bytes. */
static void test_path_prefix(void)
{
	/* é/É: two bytes either way */
	CHECK_INT(under("D:/\xc3\xa9t\xc3\xa9/a.jpg", "d:/\xc3\x89T\xc3\x89"), 8);
	/* 写真 has no case; 📷 is a surrogate pair */
	CHECK_INT(under("z:/\xe5\x86\x99\xe7\x9c\x9f/a.jpg", "Z:/\xe5\x86\x99\xe7\x9c\x9f"), 9);
	CHECK_INT(under("Z:/\xf0\x9f\x93\xb7/a.jpg", "z:/\xf0\x9f\x93\xb7"), 7);
	CHECK_INT(under("Z:/\xf0\x9f\x93\xb7x/a.jpg", "z:/\xf0\x9f\x93\xb7"), 0);
	/* U+2C65 (3 bytes) and its capital U+023A (2 bytes), where the OS's
	 * table folds them (Wine's does): the path's 6 bytes, not the root's 5 */
	if (CompareStringOrdinal(L"\x2c65", 1, L"\x023a", 1, TRUE) == CSTR_EQUAL) {
		CHECK_INT(under("Z:/\xe2\xb1\xa5/a.jpg", "Z:/\xc8\xba"), 6);
		CHECK_INT(under("Z:/\xc8\xba/a.jpg", "Z:/\xe2\xb1\xa5"), 5);
	}
	/* not UTF-8: no Windows name, under nothing */
	CHECK_INT(under("Z:/\xff/a.jpg", "Z:/"), 0);
}

/* The change journal's list (sj_list) is matched to the roots by name.
 * The journal names files as the disk does (GetFinalPathNameByHandleW);
 * a root spelt in other case must still hold them (it dropped them as
 * "elsewhere" when compared byte for byte, and the new photos stayed out
 * of the index while the journal position moved on). */
static void test_list_case(void)
{
	struct walk_opts o = {0};
	struct walk_stats st = {0};
	struct strbuf sb = STRBUF_INIT;
	struct scanjn j;
	struct sj_vol *v;
	struct prep p;
	struct sl_err e;
	struct ftab ft;
	uint32_t a = 0, b = 0;
	char *up;
	size_t i;

	ftab_init(&ft);
	CHECK_INT(t_walk_root(&ft, dir, &o, &st, &e), SL_OK);
	CHECK(has_file(&ft, "/empty.jpg", &a));
	CHECK(has_file(&ft, "\xc3\xa9t\xc3\xa9 \xf0\x9f\x93\xb7.jpg", &b));
	sj_init(&j);
	j.vols = calloc(1, sizeof(*j.vols));
	CHECK(j.vols != NULL);
	if (!j.vols)
		return;
	j.nvols = j.cap = 1;
	j.listed = 1;
	v = &j.vols[0];
	v->verdict = SJ_LIST;
	v->root = strdup(dir);
	v->t.ids = malloc(2 * sizeof(*v->t.ids));
	v->t.ids[0].lo = ft.files[a].ino;
	v->t.ids[0].hi = 0;
	v->t.ids[1].lo = ft.files[b].ino;
	v->t.ids[1].hi = 0;
	v->t.nids = v->t.cap_ids = 2;
	memset(&p, 0, sizeof(p));
	p.roots = calloc(1, sizeof(*p.roots));
	/* the root in capitals (the temporary folder's name has lower-case
	 * letters) */
	up = strdup(dir);
	for (i = 0; up[i]; i++)
		if (up[i] >= 'a' && up[i] <= 'z')
			up[i] = (char)(up[i] - 'a' + 'A');
	CHECK(strcmp(up, dir) != 0);
	p.roots[0] = up;
	p.nroots = 1;
	CHECK_INT(sj_list(&j, &p, NULL, &e), SL_OK);
	CHECK_INT(j.listed, 1);
	CHECK_INT(p.ws.files, 2);
	CHECK_INT(p.ft.nfiles, 2);
	/* stored under the root as given, the rest as the disk names it */
	for (i = 0; i < p.ft.nfiles; i++) {
		sb_reset(&sb);
		ftab_path(&p.ft, (uint32_t)i, &sb);
		CHECK(strncmp(sb.p, up, strlen(up)) == 0 && sb.p[strlen(up)] == '/');
	}
	CHECK(has_file(&p.ft, "/empty.jpg", &a));
	ftab_free(&p.ft);
	free(up);
	free(p.roots);
	sj_free(&j);
	ftab_free(&ft);
	sb_free(&sb);
}

static void test_probe(void)
{
	struct dev_info d;
	struct ext_result r;
	struct sl_err e;
	char p[4096];

	const char *name;
	struct anchor *a;

	snprintf(p, sizeof(p), "%s/empty.jpg", dir);
	a = t_anchor(p, &name);
	CHECK_INT(ext_stat(a, name, &r, &e), SL_OK);
	CHECK_INT(dev_probe(r.dev, a, name, &d, &e), SL_OK);
	anchor_free(a);
	CHECK(d.mount[0] != '\0');
	CHECK(strncmp(d.fs_id, "serial:", 7) == 0);
	CHECK(d.rotational >= -1 && d.rotational <= 1);
	CHECK(d.how[0] != '\0');
	fprintf(stderr, "  probe: fs %s mount %s disk '%s' rotational %d (%s)\n", d.fstype, d.mount,
		d.disk, d.rotational, d.how);
}

static void test_reader(void)
{
	struct rd_file *f;
	struct rd_info info;
	struct sl_err e;
	char p[4096], buf[32];
	size_t got = 0;

	const char *name;
	struct anchor *a;

	snprintf(p, sizeof(p), "%s/\xe5\x86\x99\xe7\x9c\x9f/\xc3\xa9t\xc3\xa9 \xf0\x9f\x93\xb7.jpg", dir);
	a = t_anchor(p, &name);
	CHECK_INT(rd_open(a, name, &f, &info, &e), SL_OK);
	CHECK_INT(info.size, 10);
	CHECK_INT(rd_read(f, buf, sizeof(buf), 0, &got, &e), SL_OK);
	CHECK_INT(got, 10);
	CHECK(memcmp(buf, "0123456789", 10) == 0);
	CHECK_INT(rd_read(f, buf, 4, 6, &got, &e), SL_OK);
	CHECK_INT(got, 4);
	CHECK(memcmp(buf, "6789", 4) == 0);
	rd_inject(RD_OP_READ, RD_FAULT_SHORT, 0);
	CHECK_INT(rd_read(f, buf, 10, 0, &got, &e), SL_OK);
	CHECK_INT(got, 10);
	rd_inject(RD_OP_READ, RD_FAULT_EIO, 0);
	CHECK_INT(rd_read(f, buf, 10, 0, &got, &e), SL_E_IO);
	rd_close(f, 0);
	rd_inject(RD_OP_OPEN, RD_FAULT_EMFILE, 0);
	CHECK_INT(rd_open(a, name, &f, &info, &e), SL_E_RESOURCE);
	CHECK_INT(rd_open(a, "gone.jpg", &f, &info, &e), SL_E_IO);
	CHECK(f == NULL);
	anchor_free(a);
}

static void test_lock_and_sys(void)
{
	char p[4096];
	struct strbuf sb = STRBUF_INIT;
	void *a = NULL, *b = NULL;
	long holder = 0;
	uint64_t io = 0;
	char how[200];

	snprintf(p, sizeof(p), "%s/index.lock", dir);
	CHECK_INT(sys_lock(p, &a, &holder), 0);
	CHECK_INT(sys_lock(p, &b, &holder), EWOULDBLOCK);
	CHECK_INT(holder, sys_pid());
	sys_unlock(a);
	CHECK_INT(sys_lock(p, &b, &holder), 0);
	sys_unlock(b);
	CHECK_INT(t_private(p), 1);

	CHECK_INT(sys_abs_path(dir, &sb), 0);
	CHECK(sb.len > 3 && sb.p[1] == ':' && strchr(sb.p, '\\') == NULL);
	CHECK(sys_abs_path("Z:/no/such/thing", &sb) != 0);
	CHECK_INT(sys_self_exe(&sb), 0);
	CHECK(strstr(sb.p, "test_win.exe") != NULL);
	CHECK_INT(sys_config_path(1, &sb), 0);
	CHECK(strstr(sb.p, "/seekless/seekless.conf") != NULL);
	/* Wine has no background mode: then the report must say so */
	if (sys_background(how, sizeof(how)) == 0) {
		CHECK(strstr(how, "thread background mode") != NULL);
		/* Windows answers a second request with
		 * ERROR_THREAD_MODE_ALREADY_BACKGROUND: still a success */
		CHECK_INT(sys_background(how, sizeof(how)), 0);
		CHECK(strstr(how, "(already)") != NULL);
		SetThreadPriority(GetCurrentThread(), THREAD_MODE_BACKGROUND_END);
	} else {
		CHECK(strstr(how, "background mode refused") != NULL);
	}
	fprintf(stderr, "  background: %s\n", how);
	CHECK_INT(sys_io_bytes(&io), 0);
	CHECK(sys_cpu_count() >= 1);
	/* inode order on NTFS: the MFT record number, not the sequence
	 * number in the file ID's high 16 bits first */
	CHECK(ext_inode_rank(0x0005000000001234ull) == 0x1234ull);
	CHECK(ext_inode_rank(0x0001000000001235ull) > ext_inode_rank(0x0005000000001234ull));
	sb_free(&sb);
}

/* A root is named as the disk names it: typed in capitals, with '\\' and a
 * trailing separator, it comes back in the folder's own case (the change
 * journal reports names so).  Wine cannot make a junction; a Unix symlink
 * standing in for one is tested in test_win_scan.py. */
static void test_abs_path(void)
{
	struct strbuf base = STRBUF_INIT, sb = STRBUF_INIT;
	char p[4096], typed[4096];
	size_t i;

	CHECK_INT(sys_abs_path(dir, &base), 0);
	snprintf(p, sizeof(p), "%s/Photos", dir);
	CHECK_INT(t_mkdir(p), 0);
	snprintf(typed, sizeof(typed), "%s/PHOTOS/", dir);
	for (i = 0; typed[i]; i++) {
		if (typed[i] == '/')
			typed[i] = '\\';
		else if (typed[i] >= 'a' && typed[i] <= 'z')
			typed[i] = (char)(typed[i] - 'a' + 'A');
	}
	CHECK_INT(sys_abs_path(typed, &sb), 0);
	sb_adds(&base, "/Photos");
	CHECK_STR(sb.p, base.p);
	/* and the same with the drive letter in lower case */
	typed[0] = (char)(typed[0] - 'A' + 'a');
	CHECK_INT(sys_abs_path(typed, &sb), 0);
	CHECK_STR(sb.p, base.p);
	/* a drive's root keeps its slash */
	snprintf(typed, sizeof(typed), "%c:\\", base.p[0]);
	CHECK_INT(sys_abs_path(typed, &sb), 0);
	CHECK(sb.len == 3 && sb.p[1] == ':' && sb.p[2] == '/');
	CHECK(sys_abs_path("Z:/no/such/thing", &sb) != 0);
	CHECK_INT(sb.len, 0);
	sb_free(&sb);
	sb_free(&base);
}

/* Which listed entries are links, folders to walk, files to read, or
 * neither, on (attributes, tag) pairs as FileIdBothDirectoryInfo gives them.
 * Wine has no reparse tags to show (a Unix symlink to a folder comes with
 * the attribute and tag 0), so the tags are Microsoft's numbers. */
static void test_entry_kind(void)
{
	const unsigned long D = FILE_ATTRIBUTE_DIRECTORY, F = FILE_ATTRIBUTE_ARCHIVE;
	const unsigned long R = FILE_ATTRIBUTE_REPARSE_POINT;

	CHECK_INT(win_entry_kind(D, 0), WIN_KIND_DIR);
	CHECK_INT(win_entry_kind(F, 0), WIN_KIND_FILE);
	CHECK_INT(win_entry_kind(FILE_ATTRIBUTE_NORMAL, 0), WIN_KIND_FILE);
	/* name surrogates: links, whether folder or file */
	CHECK_INT(win_entry_kind(D | R, 0xA0000003), WIN_KIND_LINK); /* junction, mount point */
	CHECK_INT(win_entry_kind(D | R, 0xA000000C), WIN_KIND_LINK); /* directory symlink */
	CHECK_INT(win_entry_kind(F | R, 0xA000000C), WIN_KIND_LINK); /* file symlink */
	CHECK_INT(win_entry_kind(F | R, 0xA000001D), WIN_KIND_LINK); /* WSL symlink */
	/* OneDrive and other cloud folders: walked */
	CHECK_INT(win_entry_kind(D | R, 0x9000601A), WIN_KIND_DIR); /* IO_REPARSE_TAG_CLOUD_6 */
	CHECK_INT(win_entry_kind(D | R, 0x9000001A), WIN_KIND_DIR); /* IO_REPARSE_TAG_CLOUD */
	CHECK_INT(win_entry_kind(D | R, 0x9000001C), WIN_KIND_DIR); /* ProjFS */
	/* a cloud file that is on the disk is read; one that is not is left */
	CHECK_INT(win_entry_kind(F | R, 0x9000601A), WIN_KIND_FILE);
	CHECK_INT(win_entry_kind(F | R | 0x00400000, 0x9000601A), WIN_KIND_SPECIAL);
	CHECK_INT(win_entry_kind(D | R | 0x00040000, 0x9000601A), WIN_KIND_SPECIAL);
	CHECK_INT(win_entry_kind(F | FILE_ATTRIBUTE_OFFLINE, 0), WIN_KIND_SPECIAL);
	CHECK_INT(win_entry_kind(FILE_ATTRIBUTE_DEVICE, 0), WIN_KIND_SPECIAL);
	/* filters that keep the data in place: read */
	CHECK_INT(win_entry_kind(F | R, 0x80000013), WIN_KIND_FILE); /* IO_REPARSE_TAG_DEDUP */
	CHECK_INT(win_entry_kind(F | R, 0x80000017), WIN_KIND_FILE); /* IO_REPARSE_TAG_WOF */
	CHECK_INT(win_entry_kind(F | R, 0x8000001B), WIN_KIND_FILE); /* APPEXECLINK: no surrogate */
	/* no tag given (Wine's Unix symlinks): a folder is not followed, a
	 * file is read as before */
	CHECK_INT(win_entry_kind(D | R, 0), WIN_KIND_LINK);
	CHECK_INT(win_entry_kind(F | R, 0), WIN_KIND_FILE);
	CHECK(win_tag_is_link(0xA000000C) && win_tag_is_link(0xA0000003));
	CHECK(!win_tag_is_link(0x9000601A) && !win_tag_is_link(0x80000017) && !win_tag_is_link(0));
}

/* Which answers of SetThreadPriority(THREAD_MODE_BACKGROUND_BEGIN) mean
 * background mode is on: Wine refuses the mode, so the "already" answer can
 * only be shown on the numbers Microsoft documents. */
static void test_background_verdict(void)
{
	CHECK_INT(win_background_verdict(1, 0), WIN_BG_ON);
	CHECK_INT(win_background_verdict(0, 400), WIN_BG_ALREADY); /* thread mode already */
	CHECK_INT(win_background_verdict(0, 402), WIN_BG_REFUSED); /* the process's answer */
	CHECK_INT(win_background_verdict(0, ERROR_INVALID_PARAMETER), WIN_BG_REFUSED); /* Wine */
	CHECK_INT(win_background_verdict(0, ERROR_ACCESS_DENIED), WIN_BG_REFUSED);
}

static void put_le32(unsigned char *p, uint32_t v)
{
	int i;
	for (i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Listing entries as FileIdExtdDirectoryInfo and FileIdBothDirectoryInfo
 * give them: a ReFS ID with an upper half comes folded as the open file's
 * (the walk compared the 64-bit listing ID with the index's own files'
 * folded IDs, so on ReFS the index was walked and read as a photo). */
static void test_dirent(void)
{
	union {
		FILE_ID_BOTH_DIR_INFO both;
		unsigned char raw[256];
	} b;
	unsigned char x[256], id[16];
	struct win_dirent en;
	int i;

	memset(x, 0, sizeof(x));
	for (i = 0; i < 16; i++)
		id[i] = (unsigned char)(0x10 + i);
	put_le32(x, 96);          /* NextEntryOffset */
	put_le32(x + 56, 0x410);  /* FileAttributes: DIRECTORY | REPARSE_POINT */
	put_le32(x + 60, 4);      /* FileNameLength: 2 units */
	put_le32(x + 64, 0x55);   /* EaSize: not the tag in this class */
	put_le32(x + 68, 0x9000001A); /* ReparsePointTag: a cloud folder */
	memcpy(x + 72, id, 16);
	x[88] = 'a';
	x[90] = 'b';
	win_dirent(x, 1, &en);
	CHECK_INT(en.len, 2);
	CHECK(en.name[0] == L'a' && en.name[1] == L'b');
	CHECK_INT(en.attrs, 0x410);
	CHECK_INT(en.tag, 0x9000001A);
	CHECK_INT(en.next, 96);
	CHECK(en.raw.lo == 0x1716151413121110ull && en.raw.hi == 0x1f1e1d1c1b1a1918ull);
	CHECK(en.id == win_fold_id(id) && en.id != en.raw.lo);
	/* NTFS's upper half is 0: the ID is the 64-bit one, unchanged */
	memset(x + 80, 0, 8);
	win_dirent(x, 1, &en);
	CHECK(en.id == 0x1716151413121110ull && en.raw.hi == 0);

	memset(&b, 0, sizeof(b));
	b.both.FileAttributes = FILE_ATTRIBUTE_REPARSE_POINT;
	b.both.EaSize = 0xA000000C; /* the tag, for a reparse point */
	b.both.FileId.QuadPart = 0x0005000000001234ll;
	b.both.FileNameLength = 2;
	b.both.FileName[0] = L'z';
	win_dirent(&b, 0, &en);
	CHECK_INT(en.tag, 0xA000000C);
	CHECK(en.id == 0x0005000000001234ull && en.raw.hi == 0);
	CHECK(en.len == 1 && en.name[0] == L'z' && en.next == 0);
}

/* Injected failures (wincall.h): the folder whose name fails, and what
 * OpenFileById answers */
static const wchar_t *fail_name;
static DWORD fail_open, fail_by_id;
static int by_id_calls;

static HANDLE WINAPI failing_create(LPCWSTR name, DWORD access, DWORD share,
				    LPSECURITY_ATTRIBUTES sa, DWORD disp, DWORD flags, HANDLE tmpl)
{
	size_t n = wcslen(name), k = fail_name ? wcslen(fail_name) : 0;

	if (fail_name && n >= k && wcscmp(name + n - k, fail_name) == 0) {
		SetLastError(fail_open);
		return INVALID_HANDLE_VALUE;
	}
	return CreateFileW(name, access, share, sa, disp, flags, tmpl);
}

static HANDLE WINAPI failing_by_id(HANDLE hint, LPFILE_ID_DESCRIPTOR id, DWORD access,
				   DWORD share, LPSECURITY_ATTRIBUTES sa, DWORD flags)
{
	by_id_calls++;
	if (fail_by_id) {
		SetLastError(fail_by_id);
		return INVALID_HANDLE_VALUE;
	}
	return OpenFileById(hint, id, access, share, sa, flags);
}

/* Walk base with the folder named `bad` failing to open with `e`. */
static void walk_failing(const char *base, const wchar_t *bad, DWORD e, DWORD by_id,
			 struct ftab *ft, struct walk_stats *st)
{
	struct walk_opts o = {0};
	struct sl_err err;

	fail_name = bad;
	fail_open = e;
	fail_by_id = by_id;
	by_id_calls = 0;
	win_call.create_file = failing_create;
	win_call.open_by_id = failing_by_id;
	ftab_init(ft);
	memset(st, 0, sizeof(*st));
	CHECK_INT(t_walk_root(ft, base, &o, st, &err), SL_OK);
	win_call.create_file = CreateFileW;
	win_call.open_by_id = OpenFileById;
	fail_name = NULL;
}

static int failed_dir(const struct ftab *ft, const char *words)
{
	size_t i;

	for (i = 0; i < ft->nfiles; i++)
		if ((ft->files[i].flags & FT_DIR) && ft->files[i].err &&
		    strstr(ftab_str(ft, ft->files[i].err), words))
			return 1;
	return 0;
}

/* A listed folder whose name does not open (ntfs-3g writes names with
 * ':', which Win32 reads as a stream; a lone surrogate comes back as
 * U+FFFD): a folder error, so the root is known incomplete and nothing
 * below it is marked deleted.  It was taken for a folder deleted since the
 * listing and skipped without a word, everything below it with it. */
static void test_unopenable_folder(void)
{
	char base[4096], p[4096];
	struct walk_stats st;
	struct ftab ft;
	uint32_t id;

	snprintf(base, sizeof(base), "%s/faults", dir);
	CHECK_INT(t_mkdir(base), 0);
	snprintf(p, sizeof(p), "%s/ok", base);
	CHECK_INT(t_mkdir(p), 0);
	snprintf(p, sizeof(p), "%s/ok/a.jpg", base);
	t_write(p, "a", 1);
	snprintf(p, sizeof(p), "%s/name", base);
	CHECK_INT(t_mkdir(p), 0);
	snprintf(p, sizeof(p), "%s/name/b.jpg", base);
	t_write(p, "b", 1);

	/* Win32 refuses the name outright */
	walk_failing(base, L"\\name", ERROR_INVALID_NAME, 0, &ft, &st);
	CHECK_INT(st.dir_errors, 1);
	CHECK(failed_dir(&ft, "name does not open"));
	CHECK(has_file(&ft, "/ok/a.jpg", &id) && !has_file(&ft, "/name/b.jpg", &id));
	ftab_free(&ft);
	/* "not found", but its ID opens: still there */
	walk_failing(base, L"\\name", ERROR_PATH_NOT_FOUND, 0, &ft, &st);
	CHECK_INT(st.dir_errors, 1);
	CHECK_INT(by_id_calls, 1);
	CHECK(failed_dir(&ft, "name does not open"));
	ftab_free(&ft);
	/* "not found", and its ID is gone too: deleted since the listing */
	walk_failing(base, L"\\name", ERROR_PATH_NOT_FOUND, ERROR_INVALID_PARAMETER, &ft, &st);
	CHECK_INT(st.dir_errors, 0);
	CHECK(has_file(&ft, "/ok/a.jpg", &id));
	ftab_free(&ft);
	/* the ID cannot be asked (access denied): an error, not a deletion */
	walk_failing(base, L"\\name", ERROR_FILE_NOT_FOUND, ERROR_ACCESS_DENIED, &ft, &st);
	CHECK_INT(st.dir_errors, 1);
	ftab_free(&ft);
	/* listed without IDs (FindFirstFileExW): nothing to check by, an error */
	walk_force_fallback(1);
	walk_failing(base, L"\\name", ERROR_PATH_NOT_FOUND, 0, &ft, &st);
	walk_force_fallback(0);
	CHECK_INT(st.dir_errors, 1);
	CHECK_INT(by_id_calls, 0);
	ftab_free(&ft);
}

/* The journal's list when OpenFileById fails: only an ID that names no
 * file is left out (deleted since); access denied, a delete pending or a
 * sharing violation mean the file may well be there, so the list is not
 * whole and the scan walks instead.  Every failure was taken for "gone",
 * the new photo dropped, and the journal position stored anyway. */
static void test_paths_by_id_faults(void)
{
	static const DWORD there[] = {ERROR_ACCESS_DENIED, ERROR_SHARING_VIOLATION,
				      ERROR_NOT_ENOUGH_MEMORY};
	static const DWORD gone[] = {ERROR_INVALID_PARAMETER, ERROR_FILE_NOT_FOUND,
				     ERROR_PATH_NOT_FOUND};
	struct walk_opts o = {0};
	struct walk_stats st = {0};
	struct sl_err e;
	struct ftab ft;
	struct fileid id = {0, 0};
	uint32_t a = 0;
	char why[200];
	size_t i;

	ftab_init(&ft);
	CHECK_INT(t_walk_root(&ft, dir, &o, &st, &e), SL_OK);
	CHECK(has_file(&ft, "/empty.jpg", &a));
	id.lo = ft.files[a].ino;
	win_call.open_by_id = failing_by_id;
	for (i = 0; i < sizeof(there) / sizeof(there[0]); i++) {
		struct found f = {0};
		fail_by_id = there[i];
		why[0] = 0;
		CHECK(jn_paths(dir, &id, 1, found_one, &f, why, sizeof(why)) != 0);
		CHECK(strstr(why, "by its ID") != NULL);
		CHECK_INT(f.n, 0);
	}
	for (i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		struct found f = {0};
		fail_by_id = gone[i];
		CHECK_INT(jn_paths(dir, &id, 1, found_one, &f, why, sizeof(why)), 0);
		CHECK_INT(f.n, 0);
	}
	fail_by_id = 0;
	win_call.open_by_id = OpenFileById;
	ftab_free(&ft);
}

/* The attributes of open files, with FILE_ATTRIBUTE_RECALL_ON_DATA_ACCESS
 * added to those whose name ends so: Wine keeps no such attribute */
static const wchar_t *remote_name;

static BOOL WINAPI remote_info(HANDLE h, LPBY_HANDLE_FILE_INFORMATION bi)
{
	wchar_t name[1024];
	DWORD n;

	if (!GetFileInformationByHandle(h, bi))
		return FALSE;
	n = GetFinalPathNameByHandleW(h, name, 1024, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
	if (n > 0 && n < 1024 && n >= wcslen(remote_name) &&
	    wcscmp(name + n - wcslen(remote_name), remote_name) == 0)
		bi->dwFileAttributes |= 0x00400000 | FILE_ATTRIBUTE_OFFLINE;
	return TRUE;
}

/* A file whose data is not on this disk (a cloud placeholder made
 * online-only since the walk, an HSM stub) is neither listed from the
 * journal nor read: opened through its filter, it is downloaded.  The
 * journal's list and the reader took it like any file. */
static void test_not_on_disk(void)
{
	char p[4096];
	const char *name;
	struct anchor *an;
	struct rd_file *f = NULL;
	struct rd_info info;
	struct found fo = {0};
	struct fileid id = {0, 0};
	struct sl_err e;
	uint64_t dev;
	char why[200];

	snprintf(p, sizeof(p), "%s/online-only.jpg", dir);
	t_write(p, "cloud", 5);
	CHECK_INT(sys_file_id(p, &dev, &id.lo), 0);
	/* as it is: listed and read */
	CHECK_INT(jn_paths(dir, &id, 1, found_one, &fo, why, sizeof(why)), 0);
	CHECK_INT(fo.n, 1);
	an = t_anchor(p, &name);
	CHECK_INT(rd_open(an, name, &f, &info, &e), SL_OK);
	rd_close(f, 0);
	/* online-only */
	remote_name = L"\\online-only.jpg";
	win_call.file_info = remote_info;
	fo.n = 0;
	CHECK_INT(jn_paths(dir, &id, 1, found_one, &fo, why, sizeof(why)), 0);
	CHECK_INT(fo.n, 0);
	f = NULL;
	CHECK_INT(rd_open(an, name, &f, &info, &e), SL_E_UNSUPPORTED);
	CHECK(f == NULL && strstr(e.msg, "not on this disk") != NULL);
	win_call.file_info = GetFileInformationByHandle;
	anchor_free(an);
	t_unlink(p);
}

static EXECUTION_STATE seen_awake;

/* On the scan's own thread (scan.h: phase): the execution state the scan
 * set, read by setting the same again. */
static void probe_awake(void *ctx, const char *what, size_t n)
{
	(void)ctx;
	(void)n;
	if (strcmp(what, "walk") == 0)
		seen_awake = SetThreadExecutionState(ES_CONTINUOUS | ES_SYSTEM_REQUIRED);
}

/* A scan holds off idle sleep while it runs, and lets it again when done:
 * disk and CPU work are not use to Windows, so idle sleep suspended long
 * scans.  Execution states are the thread's, so the scan's is read from
 * its phase callback. */
static void test_keep_awake(void)
{
	char *base = t_tmpdir("awake"), db[4096];
	char *roots[] = {dir};
	struct scan_args a;
	struct scan_result r;
	EXECUTION_STATE after;
	int rc;

	snprintf(db, sizeof(db), "%s/index.db", base);
	memset(&a, 0, sizeof(a));
	a.unconfined = 1;
	a.order = a.cross_fs = a.phash = a.phash_now = a.trust_mtime = a.background = -1;
	a.db = db;
	a.roots = roots;
	a.nroots = 1;
	a.phase = probe_awake;
	SetThreadExecutionState(ES_CONTINUOUS); /* nothing held */
	seen_awake = 0;
	rc = scan_run(&a, &r);
	after = SetThreadExecutionState(ES_CONTINUOUS);
	CHECK_INT(rc, SL_OK);
	CHECK_INT(seen_awake, ES_CONTINUOUS | ES_SYSTEM_REQUIRED);
	CHECK_INT(after, ES_CONTINUOUS);
	scan_result_free(&r);
	t_rmtree(base);
}

/* What each console control event does to a scan (win_console_verdict).
 * Wine sends none but Ctrl+C and Ctrl+Break, so the rest are Microsoft's
 * numbers: a logoff of any user ended the service's scan (the default
 * handler), and a closed console ended the scan before it stored its last
 * batch (the system ends the process once the handler returns). */
static void test_console_verdict(void)
{
	CHECK_INT(win_console_verdict(CTRL_C_EVENT, 0), WIN_CTL_STOP);
	CHECK_INT(win_console_verdict(CTRL_BREAK_EVENT, 0), WIN_CTL_STOP);
	CHECK_INT(win_console_verdict(CTRL_C_EVENT, 1), WIN_CTL_DEFAULT); /* twice: now */
	CHECK_INT(win_console_verdict(CTRL_CLOSE_EVENT, 0), WIN_CTL_STOP_WAIT);
	CHECK_INT(win_console_verdict(CTRL_CLOSE_EVENT, 1), WIN_CTL_STOP_WAIT);
	CHECK_INT(win_console_verdict(CTRL_SHUTDOWN_EVENT, 0), WIN_CTL_STOP_WAIT);
	CHECK_INT(win_console_verdict(CTRL_LOGOFF_EVENT, 0), WIN_CTL_IGNORE);
	CHECK_INT(win_console_verdict(CTRL_LOGOFF_EVENT, 1), WIN_CTL_IGNORE);
	CHECK_INT(win_console_verdict(7, 0), WIN_CTL_DEFAULT);
}

int main(void)
{
	dir = t_tmpdir("win");
	RUN(test_paths);
	RUN(test_errors);
	RUN(test_walk_and_locate);
	RUN(test_paths_by_id);
	RUN(test_identity);
	RUN(test_path_prefix);
	RUN(test_list_case);
	RUN(test_probe);
	RUN(test_reader);
	RUN(test_lock_and_sys);
	RUN(test_abs_path);
	RUN(test_background_verdict);
	RUN(test_entry_kind);
	RUN(test_console_verdict);
	RUN(test_keep_awake);
	RUN(test_dirent);
	RUN(test_unopenable_folder);
	RUN(test_paths_by_id_faults);
	RUN(test_not_on_disk);
	t_rmtree(dir);
	return t_done();
}
