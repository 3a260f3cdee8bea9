/* verify_plan against a "disk" that is an image file in /dev/shm (rawdev
 * opens /dev/<disk>, so disk "shm/NAME" is it): real files, real reads,
 * positions set by hand so that one is right, one points at other bytes,
 * and the rest cannot be checked for each reason.  The integration test
 * (test_verify.py) does the same on real file systems and disks. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "scanner/chunkmap.h"
#include "scanner/verify.h"
#include "tests/unit/test.h"

#define PART 65536u

struct seen {
	int calls;
	uint32_t file;
	uint64_t pos;
	size_t at;
};

static void differs(void *ctx, size_t group, uint32_t file, uint64_t pos, size_t at)
{
	struct seen *s = ctx;
	(void)group;
	s->calls++;
	s->file = file;
	s->pos = pos;
	s->at = at;
}

static uint32_t add(struct ftab *ft, uint32_t dir, const char *name, uint16_t dev, uint16_t flags,
		    uint64_t phys, uint64_t size)
{
	struct sl_err e;
	uint32_t id;
	CHECK_INT(ftab_add_file(ft, dir, name, strlen(name), 1, dev, &id, &e), SL_OK);
	ft->files[id].flags = (uint16_t)(FT_STATED | flags);
	ft->files[id].phys = phys;
	ft->files[id].size = size;
	return id;
}

static void test_verify(void)
{
	char *dir = t_tmpdir("verify");
	char img[128], p[4096], name[48];
	unsigned char *a = t_bytes(6000, 1), *b = t_bytes(3000, 2), *disk = t_bytes(1 << 20, 3);
	struct ftab ft;
	struct dev_info devs[2];
	struct plan pl;
	struct plan_group gr[2];
	struct verify_group v[2];
	struct seen seen = {0, 0, 0, 0};
	struct verify_cb cb = {&seen, differs};
	struct sl_err e;
	uint32_t root, seq[7], fa, fb;
	uint16_t d0, d1;

	snprintf(name, sizeof(name), "seekless-verify-%ld.img", (long)getpid());
	snprintf(img, sizeof(img), "/dev/shm/%s", name);
	/* a's head at 8192 of the file system (which starts at PART); b's at
	 * 20000, but with byte 100 changed */
	memcpy(disk + PART + 8192, a, VERIFY_LEN);
	memcpy(disk + PART + 20000, b, 3000);
	disk[PART + 20000 + 100] ^= 0x5a;
	t_write(img, disk, 1 << 20);

	ftab_init(&ft);
	CHECK_INT(ftab_add_dir(&ft, FT_NONE, dir, strlen(dir), &root, &e), SL_OK);
	CHECK_INT(ftab_dev(&ft, 1, &d0, &e), SL_OK);
	CHECK_INT(ftab_dev(&ft, 2, &d1, &e), SL_OK);
	snprintf(p, sizeof(p), "%s/a", dir);
	t_write(p, a, 6000);
	snprintf(p, sizeof(p), "%s/b", dir);
	t_write(p, b, 3000);
	snprintf(p, sizeof(p), "%s/far", dir);
	t_write(p, a, 6000);
	fa = add(&ft, root, "a", d0, FT_LOCATED, 8192, 6000);
	fb = add(&ft, root, "b", d0, FT_LOCATED, 20000, 3000);
	seq[0] = fa;
	seq[1] = fb;
	seq[2] = add(&ft, root, "inline", d0, FT_INLINE, 0, 10);
	seq[3] = add(&ft, root, "gone", d0, FT_LOCATED, 4096, 100);     /* no such file */
	seq[4] = add(&ft, root, "far", d0, FT_LOCATED, 1u << 21, 6000); /* past the end */
	seq[5] = add(&ft, root, "a", d1, FT_LOCATED, 8192, 6000);       /* no device */
	seq[6] = add(&ft, root, "empty", d1, FT_EMPTY, 0, 0);

	memset(devs, 0, sizeof(devs));
	snprintf(devs[0].disk, sizeof(devs[0].disk), "shm/%s", name);
	snprintf(devs[0].fstype, sizeof(devs[0].fstype), "ext4");
	devs[0].part_start = PART;
	snprintf(devs[1].fstype, sizeof(devs[1].fstype), "fuse"); /* no disk */
	memset(&pl, 0, sizeof(pl));
	memset(gr, 0, sizeof(gr));
	pl.seq = seq;
	pl.n = 7;
	pl.groups = gr;
	pl.ngroups = 2;
	gr[0].first = 0;
	gr[0].count = 5;
	gr[1].first = 5;
	gr[1].count = 2;

	CHECK_INT(verify_plan(&ft, devs, &pl, v, &cb, &e), SL_OK);
	CHECK_INT(v[0].files, 5);
	CHECK_INT(v[0].verified, 1);
	CHECK_INT(v[0].differ, 1);
	CHECK_INT(v[0].skipped[VS_INLINE], 1);
	CHECK_INT(v[0].skipped[VS_FILE], 1);
	CHECK_INT(v[0].skipped[VS_READ], 1);
	CHECK_INT(v[0].devices_read, 1);
	CHECK(strstr(v[0].device, name) != NULL);
	CHECK_STR(v[0].device_error, "");
	CHECK_INT(seen.calls, 1);
	CHECK_INT(seen.file, fb);
	CHECK_INT(seen.pos, 20000);
	CHECK_INT(seen.at, 100);
	CHECK_INT(v[1].devices_read, 0);
	CHECK_INT(v[1].skipped[VS_DEVICE], 1);
	CHECK_INT(v[1].skipped[VS_EMPTY], 1);
	CHECK(v[1].device_error[0] != 0);

	/* the partition start is what makes a right: without it a differs */
	devs[0].part_start = 0;
	seen.calls = 0;
	CHECK_INT(verify_plan(&ft, devs, &pl, v, &cb, &e), SL_OK);
	CHECK_INT(v[0].verified, 0);
	CHECK_INT(v[0].differ, 2);

	/* btrfs positions left logical are not compared, and why is kept */
	devs[0].part_start = PART;
	snprintf(devs[0].fstype, sizeof(devs[0].fstype), "btrfs");
	ft.devs[0].logical = CM_MULTIDEV;
	CHECK_INT(verify_plan(&ft, devs, &pl, v, &cb, &e), SL_OK);
	CHECK_INT(v[0].skipped[VS_LOGICAL], 4);
	CHECK_INT(v[0].logical_why, CM_MULTIDEV);
	CHECK_INT(v[0].verified + v[0].differ, 0);
	/* mapped ones are, like any other file system's */
	ft.devs[0].logical = CM_MAPPED;
	CHECK_INT(verify_plan(&ft, devs, &pl, v, &cb, &e), SL_OK);
	CHECK_INT(v[0].skipped[VS_LOGICAL], 0);
	CHECK_INT(v[0].verified, 1);
	CHECK_INT(v[0].differ, 1);
	CHECK_STR(verify_skip_name(VS_DEVICE), "device not readable");

	unlink(img);
	for (size_t i = 0; i < 3; i++) {
		static const char *const made[] = {"a", "b", "far"};
		snprintf(p, sizeof(p), "%s/%s", dir, made[i]);
		unlink(p);
	}
	rmdir(dir);
	free(dir);
	ftab_free(&ft);
	free(a);
	free(b);
	free(disk);
}

int main(void)
{
	RUN(test_verify);
	return t_done();
}
