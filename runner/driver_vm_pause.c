/* Pause and resume of a vm sandbox, its memory kept in RAM as a jail's:
 * the agent first ends every connection (streams and waits with the error
 * `paused`), then the freezer of the sandbox's cgroup stops QEMU, its vsock
 * backend and the supervisor where they stand (rn_cgroup_freeze, v1 and
 * v2). Nothing of the VM spins while paused; resume thaws them. The guest's
 * clocks see the pause as time that passed, as a jail's processes do. A
 * paused VM lives only in the runner's memory: a runner restart ends it
 * (reconcile kills the frozen cgroup) as it does a frozen jail. */
#include "driver_vm.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rn_cgroup.h"
#include "runner.h"
#include "sbx_clock.h"
#include "sbx_dial.h"
#include "sbx_frame.h"
#include "sbx_json.h"
#include "sbx_log.h"

/* How long the guest's agent has to answer the quiesce: a busy host
 * translating the guest (TCG) answers within a second; the runner's loop
 * waits, as for a jail's agent. */
#define VM_QUIESCE_MS 10000

static const char *cgroup_of(const struct rn_sandbox *sb, struct sbx_err *err)
{
	const char *cg = sb->drv->ops->cgroup ? sb->drv->ops->cgroup(sb) : NULL;

	if (!cg)
		sbx_err_set(err, ENOENT, "sandbox %s has no cgroup", sb->id);
	return cg;
}

/* The agent's answer in buf[0, n): 1 ok, 0 more bytes needed, -1 with err. */
static int answer(const struct rn_sandbox *sb, const unsigned char *buf, size_t n,
		  struct sbx_err *err)
{
	long ok = sbx_dial_parse_ok(buf, n, SBX_AGENT_PORT);
	struct sbx_frame f;
	long used;
	cJSON *o;
	int good;

	if (ok < 0)
		return sbx_err_set(err, ECONNREFUSED, "the agent of %s did not answer the dial",
				   sb->id);
	if (ok == 0)
		return 0;
	used = sbx_frame_decode(buf + ok, n - (size_t)ok, (uint32_t)n, &f, err);
	if (used < 0)
		return -1;
	if (used == 0)
		return 0;
	if (f.type != SBX_FRAME_JSON || !(o = sbx_json_parse_object(f.payload, f.len, err)))
		return sbx_err_set(err, EPROTO, "the agent of %s answered the quiesce with "
				   "something else", sb->id);
	good = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok"));
	cJSON_Delete(o);
	if (!good)
		return sbx_err_set(err, EPROTO, "the agent of %s refused the quiesce (an agent "
				   "older than the runner?)", sb->id);
	return 1;
}

/* {"op":"quiesce"} over the agent's own protocol: the host cannot signal
 * the guest's PID 1 as it signals a jail's. */
static int quiesce_agent(const struct rn_sandbox *sb, struct sbx_err *err)
{
	static const char req[] = "{\"op\":\"quiesce\"}";
	unsigned char frame[SBX_FRAME_HDR + sizeof(req) - 1], buf[1024];
	size_t n = 0;
	int64_t until = sbx_mono_ms() + VM_QUIESCE_MS;
	int fd = sbx_dial_start(sb->agent_socket, SBX_AGENT_PORT), rc = 0;

	if (fd < 0)
		return sbx_err_sys(err, "dial the agent of %s", sb->id);
	sbx_frame_header(frame, SBX_FRAME_JSON, sizeof(req) - 1);
	memcpy(frame + SBX_FRAME_HDR, req, sizeof(req) - 1);
	if (send(fd, frame, sizeof(frame), MSG_NOSIGNAL) != (ssize_t)sizeof(frame)) {
		rc = sbx_err_sys(err, "send the quiesce to the agent of %s", sb->id);
		goto out;
	}
	while (rc == 0) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = until - sbx_mono_ms();
		ssize_t got;

		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			rc = sbx_err_set(err, ETIMEDOUT, "the agent of %s did not end its "
					 "connections within %d ms", sb->id, VM_QUIESCE_MS);
			break;
		}
		got = recv(fd, buf + n, sizeof(buf) - n, MSG_DONTWAIT);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0) {
			rc = got < 0 ? sbx_err_sys(err, "read the agent of %s", sb->id) :
			     sbx_err_set(err, ECONNRESET, "the agent of %s closed before it "
					 "answered the quiesce", sb->id);
			break;
		}
		n += (size_t)got;
		rc = answer(sb, buf, n, err);
		if (rc == 0 && n == sizeof(buf))
			rc = sbx_err_set(err, EPROTO, "the agent of %s answered too much", sb->id);
	}
out:
	close(fd);
	return rc < 0 ? -1 : 0;
}

int vm_pause_op(struct rn_sandbox *sb, struct sbx_err *err)
{
	const char *cg = cgroup_of(sb, err);

	if (!cg || quiesce_agent(sb, err) < 0)
		return -1;
	/* the connections are gone; a failed freeze leaves it running */
	return rn_cgroup_freeze(&sb->drv->r->cg, cg, 1, err);
}

int vm_resume_op(struct rn_sandbox *sb, struct sbx_err *err)
{
	const char *cg = cgroup_of(sb, err);

	return cg ? rn_cgroup_freeze(&sb->drv->r->cg, cg, 0, err) : -1;
}

void vm_thaw(struct rn_sandbox *sb)
{
	struct sbx_err err = { 0, "" };
	const char *cg = sb->drv_data ? sb->drv->ops->cgroup(sb) : NULL;

	/* thawing a cgroup that is not frozen changes nothing */
	if (cg && rn_cgroup_freeze(&sb->drv->r->cg, cg, 0, &err) < 0 && err.code != ENOENT &&
	    err.code != ENOTSUP)
		sbx_warn("%s: thaw before the stop: %s", sb->id, err.msg);
}
