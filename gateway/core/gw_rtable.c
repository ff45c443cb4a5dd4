/* The runners table's pure parts (gw_runner.h): a sandbox id's runner
 * name, the placement order of a create, the merge of a discovery result.
 * No lws, no I/O: unit-tested (tests/unit/test_gw_rtable.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gw_runner.h"

int gw_sid_runner_name(const char *sid, char *name, size_t n)
{
	const char *p, *end;

	if (!sid || strncmp(sid, "sbx_", 4))
		return -1;
	p = sid + 4;
	end = strrchr(p, '_');
	if (!end || end == p || (size_t)(end - p) >= n || (size_t)(end - p) > GW_RUNNER_NAME_MAX)
		return -1;
	for (const char *c = p; c < end; c++)   /* a runner name is [a-z0-9] */
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')))
			return -1;
	memcpy(name, p, (size_t)(end - p));
	name[end - p] = '\0';
	return 0;
}

static uint64_t seq_counter;

uint64_t gw_runner_seq_next(void)
{
	return ++seq_counter;
}

static void resum(struct gw_runner *rn)
{
	rn->pending_mb = 0;
	rn->pending = rn->nrecent;
	for (int i = 0; i < rn->nrecent; i++)
		rn->pending_mb += rn->recent[i].mb;
}

void gw_runner_create_sent(struct gw_runner *rn, uint64_t seq, int64_t mb)
{
	int cap = (int)(sizeof rn->recent / sizeof rn->recent[0]);

	if (rn->nrecent == cap) {   /* the oldest: its runner's next status has it */
		memmove(rn->recent, rn->recent + 1, (size_t)(cap - 1) * sizeof rn->recent[0]);
		rn->nrecent--;
	}
	rn->recent[rn->nrecent].seq = seq;
	rn->recent[rn->nrecent++].mb = mb;
	resum(rn);
}

void gw_runner_create_failed(struct gw_runner *rn, uint64_t seq)
{
	for (int i = 0; i < rn->nrecent; i++)
		if (rn->recent[i].seq == seq) {
			memmove(rn->recent + i, rn->recent + i + 1,
				(size_t)(rn->nrecent - i - 1) * sizeof rn->recent[0]);
			rn->nrecent--;
			break;
		}
	resum(rn);
}

void gw_runner_status_seen(struct gw_runner *rn, uint64_t seq)
{
	int k = 0;

	for (int i = 0; i < rn->nrecent; i++)
		if (rn->recent[i].seq > seq)   /* sent after that status's request */
			rn->recent[k++] = rn->recent[i];
	rn->nrecent = k;
	resum(rn);
}

/* Free memory and sandboxes with the creates its status does not count yet. */
static int64_t eff_free(const struct gw_runner *rs)
{
	if (rs->memory_mb_free < 0)
		return -1;
	return rs->memory_mb_free > rs->pending_mb ? rs->memory_mb_free - rs->pending_mb : 0;
}

static int eff_sandboxes(const struct gw_runner *rs)
{
	return rs->sandboxes + rs->pending;
}

/* The isolation a create on rs gets: the asked one, else rs's default. */
static const char *iso_of(const struct gw_runner *rs, const char *iso)
{
	return iso && *iso ? iso : rs->default_iso;
}

/* 1 available, 0 known but not available, -1 unknown to rs. A runner that
 * reported no isolation list at all is taken at its word for its default. */
static int iso_state(const struct gw_runner *rs, const char *iso)
{
	for (int i = 0; i < rs->niso; i++)
		if (!strcmp(rs->iso[i].name, iso))
			return rs->iso[i].available ? 1 : 0;
	return rs->niso ? -1 : (!*iso || !strcmp(iso, rs->default_iso) ? 1 : -1);
}

int gw_runner_iso_state(const struct gw_runner *rs, const char *iso, const char **reason)
{
	const char *want = iso_of(rs, iso);

	*reason = "";
	for (int i = 0; i < rs->niso; i++)
		if (!strcmp(rs->iso[i].name, want)) {
			*reason = rs->iso[i].reason;
			break;
		}
	return iso_state(rs, want);
}

const char *gw_place_why_not(const struct gw_runner *rs, const char *iso, int64_t memory_mb,
			     char *buf, size_t n)
{
	const char *want = iso_of(rs, iso);

	buf[0] = '\0';
	if (rs->state == GW_RUNNER_DOWN)
		snprintf(buf, n, "down");
	else if (rs->state == GW_RUNNER_REFUSED)
		snprintf(buf, n, "refused");
	else if (rs->state != GW_RUNNER_UP)
		snprintf(buf, n, "not answered yet");
	else if (rs->gone)
		snprintf(buf, n, "no longer discovered");
	else if (rs->draining)
		snprintf(buf, n, "draining");
	else if (iso_state(rs, want) != 1)
		snprintf(buf, n, "no %s isolation", want);
	else if (eff_free(rs) >= 0 && eff_free(rs) < memory_mb)
		snprintf(buf, n, "%lld MB free, %lld asked", (long long)eff_free(rs),
			 (long long)memory_mb);
	return buf;
}

struct cand {
	const struct gw_runner *rs;
	int i;
};

static int cmp_cand(const void *a, const void *b)
{
	const struct gw_runner *x = ((const struct cand *)a)->rs, *y = ((const struct cand *)b)->rs;
	int64_t fx = eff_free(x), fy = eff_free(y);
	int kx = fx >= 0, ky = fy >= 0;

	if (kx != ky)
		return ky - kx;   /* reported before unreported */
	if (kx && fx != fy)
		return fx > fy ? -1 : 1;
	if (eff_sandboxes(x) != eff_sandboxes(y))
		return eff_sandboxes(x) < eff_sandboxes(y) ? -1 : 1;
	if (x->load1 != y->load1)
		return x->load1 < y->load1 ? -1 : 1;
	/* stable: table order */
	return ((const struct cand *)a)->i - ((const struct cand *)b)->i;
}

int gw_place_order(const struct gw_runner *const *rs, int n, const char *iso, int64_t memory_mb,
		   int *out, int max)
{
	struct cand c[GW_RUNNERS_MAX];
	char why[64];
	int k = 0;

	for (int i = 0; i < n && k < GW_RUNNERS_MAX; i++)
		if (!*gw_place_why_not(rs[i], iso, memory_mb, why, sizeof why))
			c[k++] = (struct cand){ rs[i], i };
	qsort(c, (size_t)k, sizeof c[0], cmp_cand);
	if (k > max)
		k = max;
	for (int i = 0; i < k; i++)
		out[i] = c[i].i;
	return k;
}

uint64_t gw_image_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

int gw_runner_has_image(const struct gw_runner *rs, const char *image)
{
	uint64_t h = gw_image_hash(image);

	for (int i = 0; i < rs->nimages; i++)
		if (rs->images[i] == h)
			return 1;
	return 0;
}

void gw_place_prefer_image(const struct gw_runner *const *rs, int *order, int n,
			   const char *image)
{
	int has[GW_RUNNERS_MAX], without[GW_RUNNERS_MAX], nh = 0, nw = 0;

	for (int i = 0; i < n && i < GW_RUNNERS_MAX; i++) {
		if (gw_runner_has_image(rs[order[i]], image))
			has[nh++] = order[i];
		else
			without[nw++] = order[i];
	}
	memcpy(order, has, (size_t)nh * sizeof *order);
	memcpy(order + nh, without, (size_t)nw * sizeof *order);
}

int gw_place_iso_known(const struct gw_runner *const *rs, int n, const char *iso)
{
	int known = 0;

	for (int i = 0; i < n; i++) {
		int s = rs[i]->state == GW_RUNNER_UP || rs[i]->state == GW_RUNNER_DOWN ?
			iso_state(rs[i], iso) : -1;
		if (s == 1 && rs[i]->state == GW_RUNNER_UP)
			return 2;
		if (s >= 0)
			known = 1;
	}
	return known;
}

void gw_discovery_merge(const char *const *have, int nhave, const char *const *got, int ngot,
			int *keep, int *add)
{
	for (int i = 0; i < nhave; i++) {
		keep[i] = 0;
		for (int j = 0; j < ngot && !keep[i]; j++)
			keep[i] = !strcmp(have[i], got[j]);
	}
	for (int j = 0; j < ngot; j++) {
		add[j] = 1;
		for (int i = 0; i < nhave && add[j]; i++)
			add[j] = strcmp(have[i], got[j]) != 0;
		for (int k = 0; k < j && add[j]; k++)
			add[j] = strcmp(got[k], got[j]) != 0;
	}
}
