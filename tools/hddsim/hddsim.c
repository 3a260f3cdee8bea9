/* hddsim - an emulated 7200 rpm hard disk as a FUSE file system.
 *
 * The mount holds two files:
 *   disk     the disk image (a sparse file, best kept in /dev/shm), served
 *            with direct_io: every read and write reaches us, and is
 *            delayed by the service time model.h computes for it;
 *   control  write "latency on|off", "reset", "trace PATH", "trace off",
 *            "bad OFFSET LENGTH" (bytes of the image that now fail to
 *            read, as a disk's unreadable sectors do), "bad clear",
 *            "stall OFFSET LENGTH" (reads of them wait until "stall
 *            clear", as on a disk that stopped answering);
 *            read the counters (requests, bytes, seeks, seek tracks,
 *            modelled busy time, failed reads).
 *
 * Attach the image with `losetup --direct-io=on`, mark the loop device
 * rotational and give it mq-deadline; tools/hddsim/hddsim.sh does all that.
 *
 * Requests from the kernel (several FUSE threads) go into a queue of at
 * most --depth entries; one disk thread picks them in elevator order, asks
 * the model how long each takes and sleeps until it would be done, so
 * parallel readers get the benefit of command queueing and no more.
 */
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tools/hddsim/model.h"

#define MAX_DEPTH 256
#define MAX_BAD 64
/* A disk retries an unreadable sector for a while before it gives up. */
#define BAD_RETRY_MS 50

struct range {
	uint64_t off, len;
};

struct req {
	uint64_t off, len;
	int done;
};

static struct {
	int fd;
	uint64_t size;
	struct hdd_model model;
	pthread_mutex_t mu;
	pthread_cond_t work, space, done;
	struct req *pending[MAX_DEPTH];
	int npending;
	int latency;
	FILE *trace;
	double t0, busy_until;
	pthread_t disk;
	struct range bad[MAX_BAD], stall[MAX_BAD];
	int nbad, nstall;
	unsigned long long bad_reads;
	int stalled_now; /* reads being held */
} G = {.mu = PTHREAD_MUTEX_INITIALIZER,
       .work = PTHREAD_COND_INITIALIZER,
       .space = PTHREAD_COND_INITIALIZER,
       .done = PTHREAD_COND_INITIALIZER};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_until(double ms)
{
	struct timespec ts;
	ts.tv_sec = (time_t)(ms / 1e3);
	ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1e3) * 1e6);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void *disk_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&G.mu);
	for (;;) {
		uint64_t offs[MAX_DEPTH];
		struct req *r;
		double start, svc;
		int i, k;

		while (G.npending == 0)
			pthread_cond_wait(&G.work, &G.mu);
		for (i = 0; i < G.npending; i++)
			offs[i] = G.pending[i]->off;
		k = hdd_pick(&G.model, offs, G.npending);
		r = G.pending[k];
		G.pending[k] = G.pending[--G.npending];
		pthread_cond_signal(&G.space);
		start = now_ms() - G.t0;
		if (start < G.busy_until)
			start = G.busy_until;
		svc = hdd_service(&G.model, r->off, r->len, start);
		G.busy_until = start + svc;
		if (G.trace)
			fprintf(G.trace, "%.3f %.3f %llu %llu %.1f %d\n", start, svc,
				(unsigned long long)r->off, (unsigned long long)r->len,
				hdd_track(&G.model, r->off), G.npending);
		pthread_mutex_unlock(&G.mu);
		sleep_until(G.t0 + G.busy_until);
		pthread_mutex_lock(&G.mu);
		r->done = 1;
		pthread_cond_broadcast(&G.done);
	}
	return NULL;
}

/* Wait until the modelled disk has served [off, off+len). */
static void disk_io(uint64_t off, uint64_t len)
{
	struct req r = {off, len, 0};

	pthread_mutex_lock(&G.mu);
	if (!G.latency) {
		pthread_mutex_unlock(&G.mu);
		return;
	}
	while (G.npending >= G.model.p.depth)
		pthread_cond_wait(&G.space, &G.mu);
	G.pending[G.npending++] = &r;
	pthread_cond_signal(&G.work);
	while (!r.done)
		pthread_cond_wait(&G.done, &G.mu);
	pthread_mutex_unlock(&G.mu);
}

static int render_stats(char *buf, size_t cap)
{
	int n;
	pthread_mutex_lock(&G.mu);
	n = snprintf(buf, cap,
		     "latency %s\nrequests %llu\nbytes %llu\nseeks %llu\nseek_tracks %.0f\n"
		     "cache_hits %llu\nbusy_ms %.3f\ndepth %d\nbad_ranges %d\nbad_reads %llu\n"
		     "stalled_now %d\n",
		     G.latency ? "on" : "off", (unsigned long long)G.model.requests,
		     (unsigned long long)G.model.bytes, (unsigned long long)G.model.seeks,
		     G.model.seek_tracks, (unsigned long long)G.model.hits, G.model.busy_ms,
		     G.model.p.depth, G.nbad, G.bad_reads, G.stalled_now);
	pthread_mutex_unlock(&G.mu);
	return n;
}

static int control(const char *cmd, size_t n)
{
	char line[512];
	size_t l = n < sizeof(line) - 1 ? n : sizeof(line) - 1;

	memcpy(line, cmd, l);
	line[l] = '\0';
	while (l && (line[l - 1] == '\n' || line[l - 1] == ' '))
		line[--l] = '\0';
	pthread_mutex_lock(&G.mu);
	if (strcmp(line, "latency on") == 0) {
		G.latency = 1;
	} else if (strcmp(line, "latency off") == 0) {
		G.latency = 0;
	} else if (strcmp(line, "reset") == 0) {
		hdd_reset_counters(&G.model);
	} else if (strcmp(line, "bad clear") == 0) {
		G.nbad = 0;
	} else if (strcmp(line, "stall clear") == 0) {
		G.nstall = 0;
	} else if (strncmp(line, "bad ", 4) == 0 || strncmp(line, "stall ", 6) == 0) {
		int stall = line[0] == 's';
		unsigned long long off, len;
		int *count = stall ? &G.nstall : &G.nbad;
		if (sscanf(line + (stall ? 6 : 4), "%llu %llu", &off, &len) != 2 || len == 0 ||
		    *count == MAX_BAD) {
			pthread_mutex_unlock(&G.mu);
			return -EINVAL;
		}
		(stall ? G.stall : G.bad)[*count].off = off;
		(stall ? G.stall : G.bad)[*count].len = len;
		++*count;
	} else if (strcmp(line, "trace off") == 0) {
		if (G.trace)
			fclose(G.trace);
		G.trace = NULL;
	} else if (strncmp(line, "trace ", 6) == 0) {
		if (G.trace)
			fclose(G.trace);
		G.trace = fopen(line + 6, "w");
		if (!G.trace) {
			pthread_mutex_unlock(&G.mu);
			return -errno;
		}
		setvbuf(G.trace, NULL, _IOLBF, 0);
	} else {
		pthread_mutex_unlock(&G.mu);
		return -EINVAL;
	}
	pthread_mutex_unlock(&G.mu);
	return (int)n;
}

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	st->st_uid = getuid();
	st->st_gid = getgid();
	if (strcmp(path, "/") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (strcmp(path, "/disk") == 0) {
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_size = (off_t)G.size;
	} else if (strcmp(path, "/control") == 0) {
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_size = 4096;
	} else {
		return -ENOENT;
	}
	return 0;
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off, (void)fi, (void)flags;
	if (strcmp(path, "/") != 0)
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, "disk", NULL, 0, 0);
	fill(buf, "control", NULL, 0, 0);
	return 0;
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, "/disk") != 0 && strcmp(path, "/control") != 0)
		return -ENOENT;
	fi->direct_io = 1; /* every request reaches the model; nothing is cached */
	return 0;
}

/* Does [off, off+len) touch one of the n ranges?  Under G.mu. */
static int touches(const struct range *r, int n, uint64_t off, uint64_t len)
{
	int i;
	for (i = 0; i < n; i++)
		if (off < r[i].off + r[i].len && r[i].off < off + len)
			return 1;
	return 0;
}

/* Hold a read of [off, off+len) while it touches a stalled range. */
static void wait_stall(uint64_t off, uint64_t len)
{
	int held = 0;

	pthread_mutex_lock(&G.mu);
	while (touches(G.stall, G.nstall, off, len)) {
		struct timespec ts = {0, 20 * 1000000L};
		if (!held)
			G.stalled_now++, held = 1;
		pthread_mutex_unlock(&G.mu);
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&G.mu);
	}
	if (held)
		G.stalled_now--;
	pthread_mutex_unlock(&G.mu);
}

/* Does [off, off+len) touch an unreadable range?  Counts the failure. */
static int is_bad(uint64_t off, uint64_t len)
{
	int bad;

	pthread_mutex_lock(&G.mu);
	bad = touches(G.bad, G.nbad, off, len);
	G.bad_reads += (unsigned long long)bad;
	if (bad && G.trace)
		fprintf(G.trace, "EIO %llu %llu\n", (unsigned long long)off, (unsigned long long)len);
	pthread_mutex_unlock(&G.mu);
	return bad;
}

static int op_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	ssize_t n;
	(void)fi;
	if (strcmp(path, "/control") == 0) {
		char text[1024];
		int len = render_stats(text, sizeof(text));
		if (off >= len)
			return 0;
		if ((size_t)(len - off) < size)
			size = (size_t)(len - off);
		memcpy(buf, text + off, size);
		return (int)size;
	}
	if ((uint64_t)off >= G.size)
		return 0;
	if ((uint64_t)off + size > G.size)
		size = (size_t)(G.size - (uint64_t)off);
	disk_io((uint64_t)off, size);
	wait_stall((uint64_t)off, size);
	if (is_bad((uint64_t)off, size)) {
		struct timespec ts = {0, BAD_RETRY_MS * 1000000L};
		nanosleep(&ts, NULL);
		return -EIO;
	}
	n = pread(G.fd, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int op_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	ssize_t n;
	(void)fi;
	if (strcmp(path, "/control") == 0)
		return control(buf, size);
	if ((uint64_t)off + size > G.size)
		return -ENOSPC;
	disk_io((uint64_t)off, size);
	n = pwrite(G.fd, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, "/control") == 0)
		return 0;
	return (uint64_t)size == G.size ? 0 : -EPERM;
}

static int op_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path, (void)datasync, (void)fi;
	return 0; /* the backing file lives in RAM */
}

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	conn->max_write = 1u << 20;
	conn->max_readahead = 0;
	cfg->direct_io = 1;
	cfg->kernel_cache = 0;
	G.t0 = now_ms();
	pthread_create(&G.disk, NULL, disk_main, NULL);
	return NULL;
}

static const struct fuse_operations ops = {
	.getattr = op_getattr,
	.readdir = op_readdir,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.truncate = op_truncate,
	.fsync = op_fsync,
	.init = op_init,
};

static const char usage[] =
	"usage: hddsim --image FILE --size SIZE [model options] MOUNTPOINT [fuse options]\n"
	"  --image FILE       backing file (created sparse; keep it in /dev/shm)\n"
	"  --size SIZE        image size (k/M/G suffixes)\n"
	"  --latency on|off   start with the model on (default) or off\n"
	"model (7200 rpm desktop defaults):\n"
	"  --rpm 7200  --t2t 1.0  --avg 8.5  --full 18  (seek times, ms)\n"
	"  --outer 210  --inner 100  (MB/s on the outer and inner track)\n"
	"  --overhead 0.1  (ms per command)  --depth 32  (command queue)\n"
	"  --readahead 1M  --cache 8M  (drive read-ahead and cache)  --iface 550  (MB/s)\n"
	"  --capacity 1T  (modelled disk)  --base 0  (where the image starts on it)\n";

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v = strtod(s, &end);
	double mult = 1;
	switch (*end) {
	case 'k': case 'K': mult = 1024; end++; break;
	case 'm': case 'M': mult = 1024.0 * 1024; end++; break;
	case 'g': case 'G': mult = 1024.0 * 1024 * 1024; end++; break;
	case 't': case 'T': mult = 1e12; end++; break;
	default: break;
	}
	if (end == s || *end || v < 0)
		return -1;
	*out = (uint64_t)(v * mult);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"image", required_argument, NULL, 'i'}, {"size", required_argument, NULL, 's'},
		{"latency", required_argument, NULL, 'l'}, {"rpm", required_argument, NULL, 'r'},
		{"t2t", required_argument, NULL, 't'},     {"avg", required_argument, NULL, 'a'},
		{"full", required_argument, NULL, 'f'},    {"outer", required_argument, NULL, 'o'},
		{"inner", required_argument, NULL, 'n'},   {"overhead", required_argument, NULL, 'v'},
		{"depth", required_argument, NULL, 'd'},   {"capacity", required_argument, NULL, 'c'},
		{"base", required_argument, NULL, 'b'},    {"readahead", required_argument, NULL, 'R'},
		{"cache", required_argument, NULL, 'C'},   {"iface", required_argument, NULL, 'I'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct hdd_params p;
	const char *image = NULL;
	char *fargv[16];
	int fargc = 0, c, i;

	hdd_defaults(&p);
	G.latency = 1;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'i': image = optarg; break;
		case 's':
			if (parse_size(optarg, &G.size) != 0)
				goto bad;
			break;
		case 'l': G.latency = strcmp(optarg, "off") != 0; break;
		case 'r': p.rpm = atof(optarg); break;
		case 't': p.t2t_ms = atof(optarg); break;
		case 'a': p.avg_ms = atof(optarg); break;
		case 'f': p.full_ms = atof(optarg); break;
		case 'o': p.outer_mbs = atof(optarg); break;
		case 'n': p.inner_mbs = atof(optarg); break;
		case 'v': p.overhead_ms = atof(optarg); break;
		case 'd': p.depth = atoi(optarg); break;
		case 'c':
			if (parse_size(optarg, &p.capacity) != 0)
				goto bad;
			break;
		case 'b':
			if (parse_size(optarg, &p.base) != 0)
				goto bad;
			break;
		case 'R':
			if (parse_size(optarg, &p.readahead) != 0)
				goto bad;
			break;
		case 'C':
			if (parse_size(optarg, &p.cache) != 0)
				goto bad;
			break;
		case 'I': p.iface_mbs = atof(optarg); break;
		case 'h': fputs(usage, stdout); return 0;
		default: goto bad;
		}
	}
	if (!image || !G.size || optind >= argc || p.depth > MAX_DEPTH ||
	    p.base + G.size > p.capacity || hdd_init(&G.model, &p) != 0)
		goto bad;
	G.fd = open(image, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (G.fd < 0 || ftruncate(G.fd, (off_t)G.size) != 0) {
		fprintf(stderr, "hddsim: %s: %s\n", image, strerror(errno));
		return 1;
	}
	fargv[fargc++] = argv[0];
	for (i = optind; i < argc && fargc < 14; i++)
		fargv[fargc++] = argv[i];
	fargv[fargc] = NULL;
	return fuse_main(fargc, fargv, &ops, NULL);
bad:
	fputs(usage, stderr);
	return 2;
}
