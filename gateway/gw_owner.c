/* Which key created which sandbox. A key sees only its own sandboxes; a
 * sandbox the gateway did not create is nobody's, so it is a 404 for
 * every key; a restarted gateway learns its keys' sandboxes back from the
 * owner tags the runner keeps (gw_owner_sync). Bounded table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include "gw.h"
#include "sbx_dial.h"
#include "sbx_log.h"
#include "sbx_net.h"

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
		free(vh->owned[i].agent_socket);
		memmove(&vh->owned[i], &vh->owned[i + 1],
			(size_t)(vh->nowned - i - 1) * sizeof vh->owned[0]);
		vh->nowned--;
	}
	struct gw_owned *o = &vh->owned[vh->nowned++];
	strcpy(o->id, id);
	o->key = key;
	o->live = 1;
	o->agent_socket = NULL;
	return 0;
}

void gw_owner_set_agent(struct gw_vh *vh, const char *id, const char *path)
{
	for (int i = 0; i < vh->nowned; i++)
		if (!strcmp(vh->owned[i].id, id)) {
			free(vh->owned[i].agent_socket);
			vh->owned[i].agent_socket = path && strlen(path) < 108 ? strdup(path) : NULL;
		}
}

static int unix_connect(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof a.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int gw_agent_connect(struct gw_vh *vh, const char *sid, int *direct)
{
	int fd;

	*direct = 0;
	for (int i = 0; i < vh->nowned; i++) {
		const char *path = vh->owned[i].agent_socket;
		if (strcmp(vh->owned[i].id, sid) || !path)
			continue;
		if (!vh->owned[i].live)
			break;
		/* The socket's directory is shared with the sandbox, whose root
		 * could put a symlink or some other file there: the dial
		 * connects symlink-safely (lib/sbx_net.c) and writes CONNECT
		 * 1024; the caller reads the agent's "OK 1024" first. */
		fd = sbx_dial_start(path, SBX_AGENT_PORT);
		if (fd >= 0) {
			*direct = 1;
			return fd;
		}
		sbx_debug("%s: agent socket: %s; asking the runner", sid, strerror(errno));
		break;   /* gone or odd: let the runner say why */
	}
	/* the runner knows why (stopped, failed) and says so */
	return unix_connect(vh->runner_socket);
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

/* A blocking request on the runner's control socket (frames as in
 * docs/runner.md): the parsed reply, or NULL. Only used before the loop
 * runs. */
static cJSON *runner_call(const char *path, const char *req)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { 2, 0 };
	struct sbx_buf in;
	struct sbx_err err = { 0 };
	unsigned char hdr[SBX_FRAME_HDR];
	cJSON *o = NULL;
	size_t n = strlen(req);
	int fd;

	if (strlen(path) >= sizeof sa.sun_path)
		return NULL;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	sbx_frame_header(hdr, SBX_FRAME_JSON, (uint32_t)n);
	sbx_buf_init(&in, SBX_FRAME_MAX + SBX_FRAME_HDR);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
	    write(fd, hdr, sizeof hdr) == (ssize_t)sizeof hdr && write(fd, req, n) == (ssize_t)n) {
		for (;;) {
			struct sbx_frame f;
			unsigned char *d = sbx_buf_reserve(&in, 65536);
			ssize_t k = d ? read(fd, d, 65536) : -1;
			if (k <= 0)
				break;
			sbx_buf_commit(&in, (size_t)k);
			long used = sbx_frame_decode(sbx_buf_head(&in), in.len, 0, &f, &err);
			if (used < 0)
				break;
			if (used > 0) {
				if (f.type == SBX_FRAME_JSON)
					o = sbx_json_parse_object(f.payload, f.len, &err);
				break;
			}
		}
	}
	sbx_buf_free(&in);
	close(fd);
	return o;
}

void gw_owner_sync(struct gw_vh *vh)
{
	cJSON *o = runner_call(vh->runner_socket, "{\"op\":\"list\"}");
	const cJSON *s;
	int n = 0;

	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(o, "sandboxes")) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(s, "id");
		const cJSON *ow = cJSON_GetObjectItemCaseSensitive(s, "owner");
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(s, "status");
		if (!cJSON_IsString(id) || !cJSON_IsString(ow) || gw_owner_get(vh, id->valuestring) >= 0)
			continue;
		for (int k = 0; k < vh->nkeys; k++)
			if (!strcmp(vh->key_tags[k], ow->valuestring) &&
			    !gw_owner_add(vh, id->valuestring, k)) {
				if (cJSON_IsString(st) && (!strcmp(st->valuestring, "stopped") ||
							   !strcmp(st->valuestring, "failed")))
					gw_owner_set_live(vh, id->valuestring, 0);
				else
					gw_owner_set_agent(vh, id->valuestring, cJSON_GetStringValue(
						cJSON_GetObjectItemCaseSensitive(s, "agent_socket")));
				n++;
				break;
			}
	}
	if (!o)
		sbx_warn("runner %s: cannot list its sandboxes (ownership starts empty)", vh->runner_socket);
	else if (n)
		sbx_info("runner %s: %d sandbox(es) of known keys adopted", vh->runner_socket, n);
	cJSON_Delete(o);
}

void gw_owner_refresh(struct gw_vh *vh)
{
	cJSON *o = runner_call(vh->runner_socket, "{\"op\":\"list\"}");
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, "sandboxes"), *s;

	if (!cJSON_IsArray(list)) {
		cJSON_Delete(o);
		return;
	}
	for (int i = 0; i < vh->nowned; i++) {
		int running = 0;
		if (!vh->owned[i].live)
			continue;
		cJSON_ArrayForEach(s, list) {
			const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "id"));
			const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "status"));
			if (id && st && !strcmp(id, vh->owned[i].id))
				running = strcmp(st, "stopped") && strcmp(st, "failed");
		}
		if (!running) {
			vh->owned[i].live = 0;
			free(vh->owned[i].agent_socket);
			vh->owned[i].agent_socket = NULL;
		}
	}
	cJSON_Delete(o);
}

void gw_owner_forget_key(struct gw_vh *vh, int key)
{
	int stopped = 0;

	for (int i = 0; i < vh->nowned; i++) {
		struct gw_owned *o = &vh->owned[i];
		if (o->key != key)
			continue;
		/* nobody could reach (or stop) them any more: they stop now */
		if (o->live) {
			char req[160];
			snprintf(req, sizeof req, "{\"op\":\"stop\",\"id\":\"%s\"}", o->id);
			cJSON_Delete(runner_call(vh->runner_socket, req));
			o->live = 0;
			stopped++;
		}
		free(o->agent_socket);
		o->agent_socket = NULL;
		o->key = -1;
	}
	if (stopped)
		sbx_info("revoked key %d: %d sandbox(es) stopped", key, stopped);
}
