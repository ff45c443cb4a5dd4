/* The runners table (gw_runner.h). Today one entry: the local runner on
 * --runner-socket (or the embedded one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gw.h"
#include "gw_runner_addr.h"

int gw_sid_runner_name(const char *sid, char *name, size_t n)
{
	const char *p, *end;

	if (!sid || strncmp(sid, "sbx_", 4))
		return -1;
	p = sid + 4;
	end = strrchr(p, '_');
	if (!end || end == p || (size_t)(end - p) >= n)
		return -1;
	memcpy(name, p, (size_t)(end - p));
	name[end - p] = '\0';
	return 0;
}

int gw_runners_init(struct gw_vh *vh)
{
	struct gw_runner *rn = calloc(1, sizeof *rn);

	if (!rn)
		return -1;
	if (gw_runner_socket_is_tcp(vh->runner_socket)) {
		/* one runner on another host (checked by gw_main.c) */
		if (gw_runner_parse(rn, vh->runner_socket, NULL)) {
			free(rn);
			return -1;
		}
	} else {
		rn->kind = GW_RUNNER_UNIX;
		snprintf(rn->path, sizeof rn->path, "%s", vh->runner_socket);
		snprintf(rn->addr, sizeof rn->addr, "unix:%s", vh->runner_socket);
	}
	rn->state = GW_RUNNER_UP;
	vh->runners = rn;
	vh->nrunners = 1;
	return 0;
}

void gw_runners_free(struct gw_vh *vh)
{
	free(vh->runners);
	vh->runners = NULL;
	vh->nrunners = 0;
}

struct gw_runner *gw_runner_local(struct gw_vh *vh)
{
	return vh->nrunners ? &vh->runners[0] : NULL;
}

struct gw_runner *gw_runner_for_sid(struct gw_vh *vh, const char *sid)
{
	(void)sid;   /* one runner: every sandbox is its */
	return gw_runner_local(vh);
}
