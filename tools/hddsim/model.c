#include "tools/hddsim/model.h"

#include <math.h>
#include <string.h>

void hdd_defaults(struct hdd_params *p)
{
	memset(p, 0, sizeof(*p));
	p->rpm = 7200;
	p->t2t_ms = 1.0;
	p->avg_ms = 8.5;
	p->full_ms = 18.0;
	p->outer_mbs = 210;
	p->inner_mbs = 100;
	p->overhead_ms = 0.1;
	p->iface_mbs = 550;
	p->readahead = 1u << 20;
	p->cache = 8u << 20;
	p->capacity = 1000000000000ull;
	p->base = 0;
	p->depth = 32;
}

int hdd_init(struct hdd_model *m, const struct hdd_params *p)
{
	double ro, ri, x1, x2, s1, s2, y1, y2, det;

	memset(m, 0, sizeof(*m));
	m->p = *p;
	if (p->rpm <= 0 || p->outer_mbs <= 0 || p->inner_mbs <= 0 || p->inner_mbs > p->outer_mbs ||
	    p->capacity == 0 || p->t2t_ms < 0 || p->avg_ms < p->t2t_ms || p->full_ms < p->avg_ms ||
	    p->depth < 1 || p->iface_mbs <= 0)
		return -1;
	m->rev_ms = 60000.0 / p->rpm;
	ro = p->outer_mbs * 1e3; /* bytes per ms */
	ri = p->inner_mbs * 1e3;
	m->tracks = (double)p->capacity / (m->rev_ms * (ro + ri) / 2);
	if (m->tracks < 4)
		return -1;
	/* a(x-1) + b*sqrt(x-1) = seek - T at x = N/3 and x = N-1 */
	x1 = m->tracks / 3 - 1, x2 = m->tracks - 2;
	s1 = sqrt(x1), s2 = sqrt(x2);
	y1 = p->avg_ms - p->t2t_ms, y2 = p->full_ms - p->t2t_ms;
	det = x1 * s2 - x2 * s1;
	m->a = (y1 * s2 - y2 * s1) / det;
	m->b = (x1 * y2 - x2 * y1) / det;
	m->next_seq = UINT64_MAX;
	return 0;
}

double hdd_rate(const struct hdd_model *m, double track)
{
	double ro = m->p.outer_mbs * 1e3, ri = m->p.inner_mbs * 1e3;
	return ro - (ro - ri) * track / m->tracks;
}

double hdd_track(const struct hdd_model *m, uint64_t offset)
{
	/* bytes before track k: rev * (ro*k - d*k^2/(2N)), d = ro - ri; solve */
	double ro = m->p.outer_mbs * 1e3, ri = m->p.inner_mbs * 1e3, d = ro - ri;
	double x = (double)(m->p.base + offset) / m->rev_ms, k;

	if (d <= 0)
		return x / ro;
	k = (ro - sqrt(fmax(0.0, ro * ro - 2 * d * x / m->tracks))) / (d / m->tracks);
	return k < m->tracks ? k : m->tracks - 1e-9;
}

double hdd_seek_ms(const struct hdd_model *m, double d)
{
	if (d < 1)
		return 0;
	return m->p.t2t_ms + m->a * (d - 1) + m->b * sqrt(d - 1);
}

/* Where the read-ahead has got to at time t. */
static uint64_t streamed_to(const struct hdd_model *m, double t)
{
	double moved = t > m->head_ms ? (t - m->head_ms) * m->run_rate : 0;
	uint64_t at = m->head_off + (uint64_t)moved;
	return at < m->stop_off ? at : m->stop_off;
}

double hdd_service(struct hdd_model *m, uint64_t offset, uint64_t len, double now_ms)
{
	uint64_t end = offset + len;
	double track = hdd_track(m, offset), t = 0;

	if (m->run && offset >= m->run_start && offset <= m->stop_off) {
		/* in the read-ahead window: wait for the head if it is not there
		 * yet, then hand the bytes over from the cache */
		uint64_t at = streamed_to(m, now_ms);
		double ready = now_ms;
		if (end > at)
			ready = now_ms + (double)(end - at) / m->run_rate;
		t = ready - now_ms + (double)len / (m->p.iface_mbs * 1e3);
		if (end > at) {
			m->head_off = end;
			m->head_ms = ready;
		} else {
			m->head_off = at;
			m->head_ms = now_ms;
		}
		if (end + m->p.readahead > m->stop_off)
			m->stop_off = end + m->p.readahead;
		m->hits++;
	} else {
		double dist = fabs(floor(track) - floor(m->head_track));
		double arrive, angle_now, angle_target, wait;
		t = m->p.overhead_ms + hdd_seek_ms(m, dist);
		/* the platter turns with time: wait for the target angle */
		arrive = now_ms + t;
		angle_now = fmod(arrive, m->rev_ms) / m->rev_ms;
		angle_target = track - floor(track);
		wait = angle_target - angle_now;
		if (wait < 0)
			wait += 1;
		t += wait * m->rev_ms;
		t += (double)len / hdd_rate(m, track);
		if (dist >= 1) {
			m->seeks++;
			m->seek_tracks += dist;
		}
		/* a new run starts: the head reads on from here */
		m->run = 1;
		m->run_start = offset;
		m->head_off = end;
		m->head_ms = now_ms + t;
		m->run_rate = hdd_rate(m, track);
		m->stop_off = end + m->p.readahead;
	}
	/* the cache keeps only the last `cache` bytes of the run */
	if (m->head_off > m->p.cache && m->run_start < m->head_off - m->p.cache)
		m->run_start = m->head_off - m->p.cache;
	m->head_track = hdd_track(m, end);
	m->next_seq = end;
	m->requests++;
	m->bytes += len;
	m->busy_ms += t;
	return t;
}

int hdd_pick(const struct hdd_model *m, const uint64_t *offsets, int n)
{
	int i, best = -1, lowest = -1;
	uint64_t head = m->next_seq == UINT64_MAX ? 0 : m->next_seq;

	for (i = 0; i < n; i++) {
		if (offsets[i] >= head && (best < 0 || offsets[i] < offsets[best]))
			best = i;
		if (lowest < 0 || offsets[i] < offsets[lowest])
			lowest = i;
	}
	return best >= 0 ? best : lowest;
}

void hdd_reset_counters(struct hdd_model *m)
{
	m->requests = m->seeks = m->bytes = m->hits = 0;
	m->seek_tracks = m->busy_ms = 0;
}
