/* pipe_core.c - what every part of the pipeline calls (pipe_int.h): the
 * run's fatal error and stop, a file's path, the record of a file that
 * could not be read.  It calls none of them. */
#include "indexer/pipe_int.h"

#include <stdio.h>
#include <string.h>

#include "common/strbuf.h"

void pipe_set_fatal(struct pipe *P, const struct sl_err *e)
{
	pthread_mutex_lock(&P->fatal_mu);
	if (!P->fatal) {
		P->fatal = e->code ? e->code : SL_E_IO;
		P->fatal_err = *e;
	}
	pthread_mutex_unlock(&P->fatal_mu);
	atomic_store(&P->stop, 1);
}

int pipe_stopping(struct pipe *P)
{
	return atomic_load(&P->stop) || (P->o->cancel && atomic_load(P->o->cancel));
}

void pipe_nomem(struct pipe *P)
{
	struct sl_err e;
	SL_FAIL(&e, SL_E_NOMEM, 0, "pipeline: out of memory");
	pipe_set_fatal(P, &e);
}

char *pipe_path_of(struct pipe *P, uint32_t file)
{
	struct strbuf sb = STRBUF_INIT;
	if (ftab_path(P->ft, file, &sb) != 0) {
		sb_free(&sb);
		return NULL;
	}
	return sb.p;
}

void pipe_fill_location(const struct ftab *ft, struct px_record *r)
{
	const struct ft_file *f = &ft->files[r->file];
	r->phys = f->phys;
	r->fragments = f->fragments;
	r->ext_flags = f->flags;
	r->devi = f->dev;
}

void pipe_fill_error(const struct ftab *ft, struct px_record *r, uint32_t file, char *path,
		       int code, const char *msg)
{
	const struct ft_file *f = &ft->files[file];

	memset(r, 0, sizeof(*r));
	r->file = file;
	r->path = path;
	r->dev = ft->devs[f->dev].st_dev;
	r->ino = f->ino;
	r->size = f->size;
	r->mtime_ns = f->mtime_ns;
	r->ctime_ns = f->ctime_ns;
	r->btime_ns = f->btime_ns;
	pipe_fill_location(ft, r);
	r->is_dir = (f->flags & FT_DIR) != 0;
	r->err_code = code;
	snprintf(r->error, sizeof(r->error), "%s", msg);
}

int pipe_stop_cb(void *ctx)
{
	return pipe_stopping(ctx);
}
