/* What core tells the layers above it. Core never calls up: a layer that
 * wants to hear of an event registers its hooks once at start-up (the
 * stream layer: gw_stream_register), and core calls whatever is
 * registered. Every hook may be NULL. */
#ifndef GW_HOOKS_H
#define GW_HOOKS_H

struct gw_vh;
struct gw_runner;

struct gw_hooks {
	/* Key index key was revoked (gw_auth_reload): what it opened ends. */
	void (*key_revoked)(struct gw_vh *vh, int key);
	/* Runner rn on this host stopped listening (gw_runner_watch_lost):
	 * what went straight to its sandboxes' agents ends. Returns how many
	 * streams ended. */
	int (*runner_lost)(struct gw_vh *vh, struct gw_runner *rn);
};

#define GW_HOOKS_MAX 4

/* Register h (it must live as long as the process); 0, or -1 when
 * GW_HOOKS_MAX sets are registered already. */
int gw_hooks_register(const struct gw_hooks *h);
/* Call every registered hook of the event, in the order registered. */
void gw_hooks_key_revoked(struct gw_vh *vh, int key);
int gw_hooks_runner_lost(struct gw_vh *vh, struct gw_runner *rn);
#endif
