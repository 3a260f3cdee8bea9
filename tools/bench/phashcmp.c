/* phashcmp - for each JPEG named: where its perceptual hash comes from by
 * default, and how far that hash is from the one of its full image, and
 * what each costs.  For docs/benchmarks.md ("Perceptual hash sources").
 *   build/phashcmp FILE...
 * Prints one line per file: src, distance (bits, over the 8 variants and
 * plainly), microseconds for each way; then totals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sys.h"
#include "indexer/extract.h"
#include "indexer/formats/parsers.h"
#include "indexer/formats/phash.h"

static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *p = NULL;
	long len;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (p = malloc((size_t)len)) && fread(p, 1, (size_t)len, f) != (size_t)len) {
		free(p);
		p = NULL;
	}
	*n = p ? (size_t)len : 0;
	fclose(f);
	return p;
}

int main(int argc, char **argv)
{
	int i, nthumb = 0, nfull = 0, hist[65] = {0}, only = 0;
	double t_def = 0, t_full = 0;

	if (argc > 1 && strcmp(argv[1], "--default-only") == 0) {
		/* for profiles: the default way only, each file 20 times */
		for (i = 2; i < argc; i++) {
			struct x_meta m;
			struct sl_err e;
			uint64_t h;
			const char *src;
			size_t n;
			int k;
			unsigned char *p = slurp(argv[i], &n);
			if (!p)
				continue;
			memset(&m, 0, sizeof(m));
			if (x_extract(p, n, n, &m, &e) == SL_OK && x_phashable(m.format))
				for (k = 0; k < 20; k++)
					x_phash(p, n, 1, &m, &h, &src, &e);
			x_meta_release(&m);
			free(p);
		}
		return 0;
	}
	(void)only;
	for (i = 1; i < argc; i++) {
		struct x_meta m;
		struct sl_err e, ef;
		uint64_t hd, hf;
		const char *sd, *sf;
		size_t n;
		double t0, t1, t2;
		int o, rd, rf, d;
		unsigned char *p = slurp(argv[i], &n);
		if (!p)
			continue;
		memset(&m, 0, sizeof(m));
		if (x_extract(p, n, n, &m, &e) != SL_OK || !x_phashable(m.format)) {
			x_meta_release(&m);
			free(p);
			continue;
		}
		o = m.have & XM_ORIENTATION ? m.orientation : 1;
		t0 = sys_now();
		rd = x_phash(p, n, 1, &m, &hd, &sd, &e);
		t1 = sys_now();
		rf = jpg_phash(p, n, NULL, o, &hf, &sf, &ef);
		t2 = sys_now();
		if (rd == SL_OK && rf != SL_OK) { /* a RAW: no image to decode */
			printf("%-16s %8.0f us %s\n", sd, (t1 - t0) * 1e6, argv[i]);
			x_meta_release(&m);
			free(p);
			continue;
		}
		if (rd != SL_OK)
			printf("%-16s %s: %s\n", "none", argv[i], e.msg);
		if (rd == SL_OK && rf == SL_OK) {
			d = ph_distance(hd, hf);
			t_def += t1 - t0;
			t_full += t2 - t1;
			if (strcmp(sd, "exif-thumbnail") == 0) {
				nthumb++;
				hist[d]++;
			} else {
				nfull++;
			}
			printf("%-16s %2d %2d %8.0f %8.0f %s\n", sd, d,
			       __builtin_popcountll(hd ^ hf), (t1 - t0) * 1e6, (t2 - t1) * 1e6, argv[i]);
		}
		x_meta_release(&m);
		free(p);
	}
	printf("# %d from the EXIF thumbnail, %d from the image; default %.3f s, full %.3f s\n",
	       nthumb, nfull, t_def, t_full);
	printf("# distance thumbnail to image:");
	for (i = 0; i <= 64; i++)
		if (hist[i])
			printf(" %d bits: %d;", i, hist[i]);
	printf("\n");
	return 0;
}
