/* Which key created which sandbox. A key sees only its own sandboxes; a
 * sandbox the gateway did not create (or from before a restart) is
 * nobody's, so it is a 404 for every key. Bounded table. */
#include <string.h>
#include "gw.h"

int gw_owner_get(struct gw_vh *vh, const char *id)
{
	for (int i = 0; i < vh->nowned; i++)
		if (!strcmp(vh->owned[i].id, id))
			return vh->owned[i].key;
	return -1;
}

int gw_owner_add(struct gw_vh *vh, const char *id, int key)
{
	if (strlen(id) >= sizeof vh->owned[0].id)
		return -1;
	if (vh->nowned >= GW_MAX_OWNED) {
		/* drop the oldest stopped entry to make room */
		int i;
		for (i = 0; i < vh->nowned && vh->owned[i].live; i++)
			;
		if (i == vh->nowned)
			return -1;
		memmove(&vh->owned[i], &vh->owned[i + 1],
			(size_t)(vh->nowned - i - 1) * sizeof vh->owned[0]);
		vh->nowned--;
	}
	struct gw_owned *o = &vh->owned[vh->nowned++];
	strcpy(o->id, id);
	o->key = key;
	o->live = 1;
	return 0;
}

void gw_owner_set_live(struct gw_vh *vh, const char *id, int live)
{
	for (int i = 0; i < vh->nowned; i++)
		if (!strcmp(vh->owned[i].id, id))
			vh->owned[i].live = live;
}

int gw_owner_count_live(struct gw_vh *vh, int key)
{
	int n = 0;
	for (int i = 0; i < vh->nowned; i++)
		n += vh->owned[i].key == key && vh->owned[i].live;
	return n;
}
