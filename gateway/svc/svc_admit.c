/* Whether the caller's key may use sandbox c->sid: the owner table, and
 * for a sandbox no key here has (made through another gateway, or before
 * a restart that lost it) its runner, asked once (gw_owner_lookup.c). A
 * sandbox of another key and one that does not exist get the same 404:
 * ids are never confirmed to anyone else. */
#include "svc.h"

int svc_admit_known(struct svc_call *c)
{
	int owner = gw_owner_get(c->vh, c->sid);

	if (owner < 0)
		return 0;
	if (owner != c->key)
		return svc_fail(c, 404, "not_found", "no sandbox %s", c->sid);
	return 1;
}

static void refreshed(struct gw_owner_wait *w)
{
	struct svc_call *c = lws_container_of(w, struct svc_call, owner_wait);
	void (*then)(struct svc_call *) = c->admitted;

	c->admitted = NULL;
	then(c);
}

/* The key's sandbox count decides whether the call may resume a kept
 * sandbox (gw_owner_resume_req): at the limit, some may have ended unseen,
 * so the runners are asked first, as a create does before refusing. */
static void admitted(struct svc_call *c, void (*then)(struct svc_call *c))
{
	if (c->refreshed || gw_owner_resume_room(c->vh, c->sid, c->key)) {
		then(c);
		return;
	}
	c->refreshed = 1;
	c->admitted = then;
	gw_owner_refresh(c->vh, &c->owner_wait, refreshed);
}

static void looked_up(struct gw_own_wait *w, enum gw_own_result res, const char *msg)
{
	struct svc_call *c = lws_container_of(w, struct svc_call, own_wait);
	void (*then)(struct svc_call *) = c->admitted;

	c->admitted = NULL;
	if (res == GW_OWN_UNAVAILABLE || res == GW_OWN_BUSY) {
		svc_fail(c, 503, res == GW_OWN_BUSY ? "no_capacity" : "runner_unavailable", "%s", msg);
		return;
	}
	/* adopted or not: the table says now */
	if (gw_owner_get(c->vh, c->sid) != c->key) {
		svc_fail(c, 404, "not_found", "no sandbox %s", c->sid);
		return;
	}
	admitted(c, then);
}

void svc_admit(struct svc_call *c, void (*then)(struct svc_call *c))
{
	int known = c->sid[0] ? svc_admit_known(c) : -1;

	if (known < 0) {
		if (!c->sid[0])
			svc_fail(c, 404, "not_found", "no sandbox given");
		return;
	}
	if (known) {
		admitted(c, then);
		return;
	}
	c->admitted = then;
	gw_owner_lookup(c->vh, c->sid, c->key, &c->own_wait, looked_up);
}
