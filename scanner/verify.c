#include "scanner/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/sys.h"
#include "scanner/rawdev.h"

static const char *const skip_names[VS_N] = {
	"inline", "unallocated", "encoded", "empty", "no extent map",
	"device not readable", "btrfs logical address", "file unreadable", "device read failed",
};

const char *verify_skip_name(int why)
{
	return why >= 0 && why < VS_N ? skip_names[why] : "?";
}

static int no_position(uint16_t flags)
{
	if (flags & FT_INLINE)
		return VS_INLINE;
	if (flags & FT_ENCODED)
		return VS_ENCODED;
	if (flags & FT_EMPTY)
		return VS_EMPTY;
	if (flags & FT_NOEXT)
		return VS_NOEXT;
	return VS_UNALLOCATED;
}

/* One open device per file system, opened when its first file comes. */
struct devs_open {
	struct rawdev **r;
	signed char *state; /* 0 not tried, 1 open, -1 failed */
};

static struct rawdev *device_of(struct devs_open *o, const struct dev_info *devs, size_t i,
				struct verify_group *g)
{
	char name[160];
	struct sl_err e;

	if (o->state[i] == 0) {
		int rc = rawdev_open(&devs[i], &o->r[i], name, sizeof(name), &e);
		o->state[i] = rc == SL_OK ? 1 : -1;
		if (!g->device[0])
			snprintf(g->device, sizeof(g->device), "%s", name);
		if (rc == SL_OK) {
			g->devices_read++;
		} else if (!g->device_error[0]) {
			snprintf(g->device_error, sizeof(g->device_error), "%s", e.msg);
		}
	}
	return o->state[i] == 1 ? o->r[i] : NULL;
}

static size_t first_difference(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t i;
	for (i = 0; i < n && a[i] == b[i]; i++)
		;
	return i;
}

int verify_plan(const struct ftab *ft, const struct dev_info *devs, const struct plan *pl,
		struct verify_group *out, const struct verify_cb *cb, struct sl_err *err)
{
	unsigned char head[VERIFY_LEN], disk[VERIFY_LEN];
	struct strbuf path = STRBUF_INIT;
	struct devs_open o;
	size_t g, i;
	int rc = SL_OK;

	memset(out, 0, pl->ngroups * sizeof(*out));
	o.r = calloc(ft->ndevs ? ft->ndevs : 1, sizeof(*o.r));
	o.state = calloc(ft->ndevs ? ft->ndevs : 1, 1);
	if (!o.r || !o.state) {
		free(o.r);
		free(o.state);
		return SL_FAIL(err, SL_E_NOMEM, 0, "verify: out of memory");
	}
	for (g = 0; g < pl->ngroups && rc == SL_OK; g++) {
		const struct plan_group *gr = &pl->groups[g];
		struct verify_group *vg = &out[g];

		vg->files = gr->count;
		for (i = gr->first; i < gr->first + gr->count; i++) {
			uint32_t k = pl->seq[i];
			const struct ft_file *f = &ft->files[k];
			struct rawdev *r;
			struct sl_err fe;
			size_t got = 0, at;

			if (!(f->flags & FT_LOCATED)) {
				vg->skipped[no_position(f->flags)]++;
				continue;
			}
			if (ft->devs[f->dev].logical) {
				if (!vg->skipped[VS_LOGICAL]++)
					vg->logical_why = ft->devs[f->dev].logical;
				continue;
			}
			if (!(r = device_of(&o, devs, f->dev, vg))) {
				vg->skipped[VS_DEVICE]++;
				continue;
			}
			sb_reset(&path);
			if (ftab_path(ft, k, &path) != 0) {
				rc = SL_FAIL(err, SL_E_NOMEM, 0, "verify: out of memory");
				break;
			}
			if (rawdev_file_head(path.p, head, sizeof(head), &got, &fe) != SL_OK ||
			    got == 0) {
				vg->skipped[VS_FILE]++;
				continue;
			}
			if (rawdev_read(r, f->phys, disk, got, &fe) != SL_OK) {
				vg->skipped[VS_READ]++;
				continue;
			}
			at = first_difference(head, disk, got);
			if (at == got) {
				vg->verified++;
				continue;
			}
			vg->differ++;
			if (cb && cb->differs)
				cb->differs(cb->ctx, g, k, f->phys, at);
		}
	}
	for (i = 0; i < ft->ndevs; i++)
		rawdev_close(o.r[i]);
	free(o.r);
	free(o.state);
	sb_free(&path);
	return rc;
}
