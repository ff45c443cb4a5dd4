/* The hooks the layers above core registered (gw_hooks.h). One service
 * thread; registration happens before the event loop starts. */
#include <stddef.h>
#include "gw_hooks.h"

static const struct gw_hooks *hooks[GW_HOOKS_MAX];
static int nhooks;

int gw_hooks_register(const struct gw_hooks *h)
{
	if (nhooks == GW_HOOKS_MAX)
		return -1;
	hooks[nhooks++] = h;
	return 0;
}

void gw_hooks_key_revoked(struct gw_vh *vh, int key)
{
	for (int i = 0; i < nhooks; i++)
		if (hooks[i]->key_revoked)
			hooks[i]->key_revoked(vh, key);
}

int gw_hooks_runner_lost(struct gw_vh *vh, struct gw_runner *rn)
{
	int n = 0;

	for (int i = 0; i < nhooks; i++)
		if (hooks[i]->runner_lost)
			n += hooks[i]->runner_lost(vh, rn);
	return n;
}
