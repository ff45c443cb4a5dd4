/* idle_timeout_ms: a sandbox with no command running and no client
 * connected to its agent for that long is stopped (reason timeout). The
 * agent knows both; it answers {"op":"idle"} with idle_ms. The probe needs
 * no event-loop plumbing: the dial (CONNECT 1024) and the request are sent
 * on one tick (a UNIX connect and a small write complete at once; the agent
 * reads the request after its OK) and the answer, "OK 1024\n" and a frame,
 * read without blocking on a tick half a second later. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rn_idle.h"
#include "rn_persist.h"
#include "rn_sandbox.h"
#include "sbx_dial.h"
#include "sbx_frame.h"
#include "sbx_json.h"
#include "sbx_log.h"

#define PROBE_EVERY_MS 1000
#define ANSWER_AFTER_MS 500

void rn_idle_close(struct rn_sandbox *sb)
{
	if (sb->idle_fd1) {
		close(sb->idle_fd1 - 1);
		sb->idle_fd1 = 0;
	}
}

static void send_probe(struct rn_sandbox *sb)
{
	static const char req[] = "{\"op\":\"idle\"}";
	unsigned char frame[SBX_FRAME_HDR + sizeof(req) - 1];
	/* the socket's directory is writable by root inside: the dial never
	 * follows what it put there */
	int fd = sbx_dial_start(sb->agent_socket, SBX_AGENT_PORT);

	if (fd < 0)
		return;
	sbx_frame_header(frame, SBX_FRAME_JSON, sizeof(req) - 1);
	memcpy(frame + SBX_FRAME_HDR, req, sizeof(req) - 1);
	if (send(fd, frame, sizeof(frame), MSG_NOSIGNAL) != (ssize_t)sizeof(frame)) {
		close(fd);
		return;
	}
	sb->idle_fd1 = fd + 1;
}

/* The agent's idle_ms, or -1 when there is no (complete, sane) answer. */
static int64_t read_answer(struct rn_sandbox *sb)
{
	unsigned char buf[512];
	struct sbx_frame f;
	struct sbx_err err = { 0 };
	ssize_t n = recv(sb->idle_fd1 - 1, buf, sizeof(buf), MSG_DONTWAIT);
	long ok = n > 0 ? sbx_dial_parse_ok(buf, (size_t)n, SBX_AGENT_PORT) : -1;
	int64_t idle = -1;
	cJSON *o;

	rn_idle_close(sb);
	if (ok <= 0 || sbx_frame_decode(buf + ok, (size_t)(n - ok), sizeof(buf), &f, &err) <= 0 ||
	    f.type != SBX_FRAME_JSON)
		return -1;
	o = sbx_json_parse_object(f.payload, f.len, &err);
	if (o && sbx_json_get_i64(o, "idle_ms", 0, INT64_MAX, &idle, &err) != 1)
		idle = -1;
	cJSON_Delete(o);
	return idle;
}

int64_t rn_idle_check(struct runner *r, struct rn_sandbox *sb, int64_t now)
{
	if (sb->status != RN_RUNNING || sb->spec.idle_timeout_ms <= 0) {
		rn_idle_close(sb);
		return -1;
	}
	if (now < sb->idle_at)
		return sb->idle_at;
	if (!sb->idle_fd1) {
		send_probe(sb);
		sb->idle_at = now + (sb->idle_fd1 ? ANSWER_AFTER_MS : PROBE_EVERY_MS);
		return sb->idle_at;
	}
	int64_t idle = read_answer(sb);
	if (idle >= sb->spec.idle_timeout_ms) {
		sbx_info("%s: idle for %lld ms (idle_timeout_ms %lld)", sb->id,
			 (long long)idle, (long long)sb->spec.idle_timeout_ms);
		rn_persist_stop(r, sb, RN_REASON_TIMEOUT);
		return -1;
	}
	sb->idle_at = now + PROBE_EVERY_MS;
	return sb->idle_at;
}
