#include "rn_snap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rn_layer.h"
#include "rn_loop.h"
#include "rn_sandbox.h"
#include "sbx_fs.h"
#include "sbx_id.h"
#include "sbx_json.h"
#include "sbx_log.h"

static void snap_path(char *out, const struct runner *r, const char *id, const char *name)
{
	/* the state dir is short (checked at start-up): never cut */
	if (snprintf(out, PATH_MAX, "%s/%s%s%s", r->snap_root, id, name ? "/" : "",
		     name ? name : "") >= PATH_MAX)
		out[0] = 0;
}

static struct rn_snap *by_id(struct runner *r, const char *id)
{
	for (struct rn_snap *s = r->snaps; s; s = s->next)
		if (!strcmp(s->id, id))
			return s;
	return NULL;
}

struct rn_snap *rn_snap_find(struct runner *r, const char *id, const char *owner)
{
	struct rn_snap *s = by_id(r, id);

	return s && !s->deleted && !s->hidden && !strcmp(s->owner, owner) ? s : NULL;
}

struct rn_snap *rn_snap_get(struct runner *r, const char *id)
{
	struct rn_snap *s = by_id(r, id);

	return s && !s->deleted ? s : NULL;
}

cJSON *rn_snap_json(const struct rn_snap *s)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "id", s->id);
	cJSON_AddStringToObject(o, "sandbox_id", s->sandbox_id);
	cJSON_AddStringToObject(o, "image", s->image);
	cJSON_AddStringToObject(o, "isolation", s->isolation);
	cJSON_AddNumberToObject(o, "size", (double)s->size);
	cJSON_AddNumberToObject(o, "created_at", (double)s->created_at);
	if (s->expires_at)
		cJSON_AddNumberToObject(o, "expires_at", (double)s->expires_at);
	else
		cJSON_AddNullToObject(o, "expires_at");
	if (s->parent[0])
		cJSON_AddStringToObject(o, "parent", s->parent);
	else
		cJSON_AddNullToObject(o, "parent");
	cJSON_AddNumberToObject(o, "depth", s->n_chain);
	cJSON_AddStringToObject(o, "owner", s->owner);
	return o;
}

/* meta.json, written whole then renamed over the old one: a crash leaves
 * the old or the new, never half of one. */
static int save(const struct runner *r, const struct rn_snap *s, struct sbx_err *err)
{
	char p[PATH_MAX];
	cJSON *o = rn_snap_json(s), *a = cJSON_AddArrayToObject(o, "chain");
	char *txt;
	int rc;

	for (int i = 0; i < s->n_chain; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(s->chain[i]));
	cJSON_AddBoolToObject(o, "deleted", s->deleted);
	cJSON_AddBoolToObject(o, "hidden", s->hidden);
	txt = sbx_json_print(o);
	cJSON_Delete(o);
	if (!txt)
		return sbx_err_set(err, ENOMEM, "out of memory");
	snap_path(p, r, s->id, "meta.json");
	rc = sbx_replace_file(p, txt, 0600);
	cJSON_free(txt);
	if (rc < 0)
		return sbx_err_sys(err, "write %s", p);
	return 0;
}

static int get_str(const cJSON *o, const char *k, char *out, size_t n)
{
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));

	if (!v || strlen(v) >= n)
		return -1;
	strcpy(out, v);
	return 0;
}

static double get_num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* One snapshot from its meta.json, or NULL (then its dir is removed). */
static struct rn_snap *load_one(struct runner *r, const char *id)
{
	char p[PATH_MAX], buf[8192];
	struct sbx_err err = { 0, "" };
	struct rn_snap *s;
	const cJSON *a, *e;
	ssize_t n;
	cJSON *o;

	snap_path(p, r, id, "meta.json");
	n = sbx_read_file(p, buf, sizeof buf);
	o = n > 0 ? sbx_json_parse_object(buf, (size_t)n, &err) : NULL;
	s = o ? calloc(1, sizeof *s) : NULL;
	if (!s)
		goto bad;
	a = cJSON_GetObjectItemCaseSensitive(o, "chain");
	if (get_str(o, "id", s->id, sizeof s->id) || strcmp(s->id, id) ||
	    get_str(o, "sandbox_id", s->sandbox_id, sizeof s->sandbox_id) ||
	    get_str(o, "image", s->image, sizeof s->image) ||
	    get_str(o, "isolation", s->isolation, sizeof s->isolation) ||
	    get_str(o, "owner", s->owner, sizeof s->owner) || !cJSON_IsArray(a))
		goto bad;
	cJSON_ArrayForEach(e, a) {
		if (s->n_chain >= RN_SNAP_DEPTH_MAX || !cJSON_IsString(e) ||
		    strlen(e->valuestring) >= RN_ID_MAX)
			goto bad;
		strcpy(s->chain[s->n_chain++], e->valuestring);
	}
	if (!s->n_chain || strcmp(s->chain[0], id))
		goto bad;
	get_str(o, "parent", s->parent, sizeof s->parent);   /* null: none */
	s->size = (int64_t)get_num(o, "size");
	s->created_at = (int64_t)get_num(o, "created_at");
	s->expires_at = (int64_t)get_num(o, "expires_at");
	s->deleted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "deleted"));
	s->hidden = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "hidden"));
	cJSON_Delete(o);
	return s;
bad:
	sbx_warn("snapshot %s: no readable meta.json (a copy that did not finish): removed", id);
	free(s);
	cJSON_Delete(o);
	snap_path(p, r, id, NULL);
	sbx_rmtree(p);
	return NULL;
}

int rn_snap_init(struct runner *r, struct sbx_err *err)
{
	char prefix[40];
	struct dirent *e;
	DIR *d;
	int n = 0;

	if (!r->snap_root[0] && snprintf(r->snap_root, sizeof r->snap_root, "%s/snapshots",
					 r->state_dir) >= (int)sizeof r->snap_root)
		return sbx_err_set(err, ENAMETOOLONG, "state dir path too long");
	if (sbx_mkdir_p(r->snap_root, 0711, 0700) < 0)
		return sbx_err_sys(err, "snapshot dir %s", r->snap_root);
	snprintf(prefix, sizeof prefix, "snp_%s_", r->name);
	d = opendir(r->snap_root);
	if (!d)
		return sbx_err_sys(err, "open %s", r->snap_root);
	while ((e = readdir(d))) {
		struct rn_snap *s;
		if (!sbx_id_valid(prefix, e->d_name))
			continue;   /* another runner's or not ours */
		s = load_one(r, e->d_name);
		if (!s)
			continue;
		s->next = r->snaps;
		r->snaps = s;
		n++;
	}
	closedir(d);
	if (n)
		sbx_info("snapshots: %d kept in %s", n, r->snap_root);
	return 0;
}

int rn_snap_layers(struct runner *r, const char *id, char paths[][4096], int n,
		   struct sbx_err *err)
{
	struct rn_snap *s = by_id(r, id);

	if (!s)
		return sbx_err_set(err, ENOENT, "no snapshot %s", id);
	if (s->n_chain > n)
		return sbx_err_set(err, ELOOP, "snapshot %s stacks %d layers", id, s->n_chain);
	for (int i = 0; i < s->n_chain; i++)
		snap_path(paths[i], r, s->chain[i], "layer");
	return s->n_chain;
}

int64_t rn_snap_store_bytes(const struct runner *r)
{
	int64_t sum = 0;

	for (const struct rn_snap *s = r->snaps; s; s = s->next)
		sum += s->size;
	return sum;
}

/* 1 when some sandbox not yet cleaned up, or another snapshot, stacks
 * the layer of s. */
static int stacked(const struct runner *r, const struct rn_snap *s)
{
	for (const struct rn_snap *o = r->snaps; o; o = o->next)
		for (int i = 1; o != s && i < o->n_chain; i++)
			if (!strcmp(o->chain[i], s->id))
				return 1;
	for (const struct rn_sandbox *sb = r->sandboxes; sb; sb = sb->next) {
		const struct rn_snap *o;
		if (rn_sandbox_final(sb) || !sb->spec.snapshot[0])
			continue;
		if (!strcmp(sb->spec.snapshot, s->id))
			return 1;
		for (o = r->snaps; o && strcmp(o->id, sb->spec.snapshot); o = o->next)
			;
		for (int i = 0; o && i < o->n_chain; i++)
			if (!strcmp(o->chain[i], s->id))
				return 1;
	}
	return 0;
}

/* Remove deleted snapshots nothing stacks, until none is left to remove
 * (removing one may free its parent). */
static void collect(struct runner *r)
{
	int again = 1;

	while (again) {
		again = 0;
		for (struct rn_snap **pp = &r->snaps; *pp;) {
			struct rn_snap *s = *pp;
			char p[PATH_MAX];
			if (!s->deleted || stacked(r, s)) {
				pp = &s->next;
				continue;
			}
			snap_path(p, r, s->id, NULL);
			if (sbx_rmtree(p) < 0) {
				sbx_warn("snapshot %s: cannot remove %s: %s", s->id, p, strerror(errno));
				pp = &s->next;
				continue;
			}
			sbx_info("snapshot %s: removed from disk", s->id);
			*pp = s->next;
			r->n_snaps--;
			free(s);
			again = 1;
		}
	}
}

void rn_snap_delete(struct runner *r, struct rn_snap *s)
{
	struct sbx_err err = { 0, "" };

	if (s->deleted)
		return;
	s->deleted = 1;
	/* if this fails a restart brings it back: said once in the log */
	if (save(r, s, &err) < 0)
		sbx_err_log("snapshot %s: %s", s->id, err.msg);
	collect(r);
}

int rn_snap_tick(struct runner *r)
{
	int64_t now = rn_now_wall(), next = -1;

	for (struct rn_snap *s = r->snaps; s; s = s->next) {
		if (s->deleted || !s->expires_at)
			continue;
		if (s->expires_at <= now) {
			sbx_info("snapshot %s: expired", s->id);
			s->deleted = 1;
			struct sbx_err err = { 0, "" };
			if (save(r, s, &err) < 0)
				sbx_err_log("snapshot %s: %s", s->id, err.msg);
		} else if (next < 0 || s->expires_at - now < next) {
			next = s->expires_at - now;
		}
	}
	/* every tick: a sandbox that ended may have freed a deleted layer */
	collect(r);
	return next > 100000 ? 100000 : (int)next;
}

/* Older snapshots of the same sandbox and owner beyond keep: deleted,
 * oldest first. */
static void keep_last(struct runner *r, const struct rn_snap *ns, int keep)
{
	for (;;) {
		struct rn_snap *oldest = NULL;
		int n = 0;
		for (struct rn_snap *s = r->snaps; s; s = s->next) {
			if (s->deleted || s->hidden || strcmp(s->sandbox_id, ns->sandbox_id) ||
			    strcmp(s->owner, ns->owner))
				continue;
			n++;
			if (!oldest || s->created_at < oldest->created_at)
				oldest = s;
		}
		if (n <= keep || !oldest || oldest == ns)
			return;
		sbx_info("snapshot %s: deleted (keep_last %d of %s)", oldest->id, keep,
			 ns->sandbox_id);
		rn_snap_delete(r, oldest);
	}
}

/* The chain a snapshot of sb stacks: its own layer over the layers of
 * the snapshot sb was made from. Past the cap, its own layer alone: the
 * snapshot sb came from (returned) is then squashed into it. */
static const struct rn_snap *chain_of(struct runner *r, const struct rn_sandbox *sb,
				      struct rn_snap *ns)
{
	const struct rn_snap *from = sb->spec.snapshot[0] ? by_id(r, sb->spec.snapshot) : NULL;

	ns->n_chain = 1;
	strcpy(ns->chain[0], ns->id);
	if (!from)
		return NULL;
	snprintf(ns->parent, sizeof ns->parent, "%s", from->id);
	if (from->n_chain + 1 > RN_SNAP_DEPTH_MAX)
		return from;
	for (int i = 0; i < from->n_chain; i++)
		strcpy(ns->chain[ns->n_chain++], from->chain[i]);
	return NULL;
}

/* One layer at <snapshots>/id/layer from the layers of from (bottom first) and top
 * over them; top is removed. */
static int squash(struct runner *r, const struct rn_snap *from, const char *id,
		  const char *top, struct rn_layer_stats *st, struct sbx_err *err)
{
	char layer[PATH_MAX], p[PATH_MAX];
	struct rn_layer_stats one;

	snap_path(layer, r, id, "layer");
	if (mkdir(layer, 0755) < 0 || chmod(layer, 0755) < 0)
		return sbx_err_sys(err, "mkdir %s", layer);
	memset(st, 0, sizeof *st);
	for (int i = from->n_chain - 1; i >= -1; i--) {
		if (i >= 0)
			snap_path(p, r, from->chain[i], "layer");
		memset(&one, 0, sizeof one);
		if (rn_layer_merge(i >= 0 ? p : top, layer, &one, err) < 0)
			return -1;
		st->bytes += one.bytes;
		st->files += one.files;
	}
	return sbx_rmtree(top) < 0 ? sbx_err_sys(err, "remove %s", top) : 0;
}

static struct rn_snap *take(struct runner *r, struct rn_sandbox *sb, const char *owner,
			    int64_t expires_in_ms, int hidden, struct sbx_err *err)
{
	struct rn_layer_stats st;
	const struct rn_snap *squash_from;
	struct rn_snap *ns;
	char prefix[40], dir[PATH_MAX], layer[PATH_MAX];
	int64_t t0 = rn_now_mono(), cap = r->snap_store_max_mb << 20;

	if (sb->status != RN_RUNNING && sb->status != RN_PAUSED) {
		sbx_err_set(err, EBUSY, "sandbox %s is %s, not running", sb->id,
			    rn_status_name(sb->status));
		return NULL;
	}
	if (!sb->drv->ops->snapshot) {
		sbx_err_set(err, ENOTSUP, "isolation %s cannot take snapshots on this runner",
			    sb->drv->ops->name);
		return NULL;
	}
	if (r->n_snaps >= RN_SNAP_MAX || rn_snap_store_bytes(r) >= cap) {
		sbx_err_set(err, ENOSPC, "the snapshot store of runner %s is full (%lld MiB); "
			    "delete snapshots to make room", r->name, (long long)r->snap_store_max_mb);
		return NULL;
	}
	ns = calloc(1, sizeof *ns);
	snprintf(prefix, sizeof prefix, "snp_%s_", r->name);
	if (!ns || sbx_id_new(prefix, ns->id, sizeof ns->id) < 0) {
		free(ns);
		sbx_err_set(err, ENOMEM, "cannot make a snapshot id");
		return NULL;
	}
	squash_from = chain_of(r, sb, ns);
	snprintf(ns->sandbox_id, sizeof ns->sandbox_id, "%s", sb->id);
	snprintf(ns->image, sizeof ns->image, "%s", sb->spec.image);
	snprintf(ns->isolation, sizeof ns->isolation, "%s", sb->drv->ops->name);
	snprintf(ns->owner, sizeof ns->owner, "%s", owner);
	snap_path(dir, r, ns->id, NULL);
	snap_path(layer, r, ns->id, squash_from ? "top" : "layer");
	if (mkdir(dir, 0700) < 0) {
		sbx_err_sys(err, "mkdir %s", dir);
		free(ns);
		return NULL;
	}
	/* the copy stops where the store would pass its cap (a sparse file's
	 * holes cost nothing) */
	memset(&st, 0, sizeof st);
	st.limit = cap - rn_snap_store_bytes(r);
	if (sb->drv->ops->snapshot(sb, layer, &st, err) < 0)
		goto fail;
	if (squash_from) {
		sbx_info("snapshot %s: %d layers under it, squashed into one", ns->id,
			 squash_from->n_chain + 1);
		if (squash(r, squash_from, ns->id, layer, &st, err) < 0)
			goto fail;
	}
	ns->size = st.bytes;
	if (rn_snap_store_bytes(r) + ns->size > cap) {
		sbx_err_set(err, ENOSPC, "the snapshot store of runner %s is full (%lld MiB); "
			    "this snapshot would take %lld bytes more", r->name,
			    (long long)r->snap_store_max_mb, (long long)ns->size);
		goto fail;
	}
	ns->created_at = rn_now_wall();
	ns->expires_at = expires_in_ms > 0 ? ns->created_at + expires_in_ms : 0;
	ns->hidden = hidden;
	if (save(r, ns, err) < 0)
		goto fail;
	ns->next = r->snaps;
	r->snaps = ns;
	r->n_snaps++;
	sbx_info("snapshot %s of %s: %lld entries, %lld bytes (%lld cloned) in %lld ms, depth %d",
		 ns->id, sb->id, (long long)st.files, (long long)st.bytes, (long long)st.reflinked,
		 (long long)(rn_now_mono() - t0), ns->n_chain);
	return ns;
fail:
	sbx_rmtree(dir);
	free(ns);
	return NULL;
}

struct rn_snap *rn_snap_take(struct runner *r, struct rn_sandbox *sb, const char *owner,
			     int64_t expires_in_ms, int keep_last_n, struct sbx_err *err)
{
	struct rn_snap *ns = take(r, sb, owner, expires_in_ms, 0, err);

	if (ns && keep_last_n > 0)
		keep_last(r, ns, keep_last_n);
	return ns;
}

struct rn_snap *rn_snap_take_hidden(struct runner *r, struct rn_sandbox *sb,
				    struct sbx_err *err)
{
	return take(r, sb, sb->spec.owner, 0, 1, err);
}
