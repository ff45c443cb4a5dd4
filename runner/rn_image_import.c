/* image_import / image_pull (rn_image_import.h). */
#include "rn_image_import.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rn_child.h"
#include "rn_oci_pull.h"
#include "rn_spec.h"
#include "sbx_fs.h"
#include "sbx_buf.h"
#include "sbx_frame.h"
#include "sbx_json.h"
#include "sbx_log.h"

const char *rn_image_err_code(int e)
{
	switch (e) {
	case EINVAL: return "invalid";
	case EEXIST: return "conflict";
	case ENOSPC: return "insufficient_storage";
	case EFBIG: return "too_large";
	case EIO: return "pull_failed";
	default: return "internal";
	}
}

static void reply(int fd, cJSON *o)
{
	char *txt = sbx_json_print(o);
	unsigned char hdr[SBX_FRAME_HDR];
	size_t n = txt ? strlen(txt) : 0;

	cJSON_Delete(o);
	if (!txt)
		return;
	sbx_frame_header(hdr, SBX_FRAME_JSON, (uint32_t)n);
	if (send(fd, hdr, sizeof hdr, MSG_NOSIGNAL) == (ssize_t)sizeof hdr)
		for (size_t off = 0; off < n;) {
			ssize_t k = send(fd, txt + off, n - off, MSG_NOSIGNAL);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			off += (size_t)k;
		}
	cJSON_free(txt);
}

static void reply_err(int fd, int e, const char *msg)
{
	cJSON *o = cJSON_CreateObject(), *er;

	cJSON_AddBoolToObject(o, "ok", 0);
	er = cJSON_AddObjectToObject(o, "error");
	cJSON_AddStringToObject(er, "code", rn_image_err_code(e));
	cJSON_AddStringToObject(er, "message", msg);
	reply(fd, o);
}

/* The upload's DATA frames to its EOF frame into spool. 0, or -1 with err. */
static int receive(int fd, struct sbx_buf *in, int spool, uint64_t max, struct sbx_err *err)
{
	uint64_t total = 0;

	for (;;) {
		struct sbx_frame f;
		struct sbx_err ferr = { 0, "" };
		long n = sbx_frame_decode(sbx_buf_head(in), in->len, 0, &f, &ferr);
		unsigned char *p;
		ssize_t k;

		if (n < 0)
			return sbx_err_set(err, EINVAL, "upload: %s", ferr.msg);
		if (n > 0) {
			if (f.type == SBX_FRAME_EOF)
				return 0;
			if (f.type != SBX_FRAME_DATA)
				return sbx_err_set(err, EINVAL, "upload: expected DATA or EOF frames");
			total += f.len;
			if (total > max)
				return sbx_err_set(err, EFBIG, "upload over the size cap (%llu MiB, "
						   "--image-max-mb)", (unsigned long long)(max >> 20));
			if (sbx_write_all(spool, f.payload, f.len) < 0)
				return sbx_err_set(err, errno == ENOSPC ? ENOSPC : EIO,
						   "upload: spooling: %s", strerror(errno));
			sbx_buf_consume(in, (size_t)n);
			continue;
		}
		p = sbx_buf_reserve(in, 65536);
		if (!p)
			return sbx_err_set(err, ENOMEM, "out of memory");
		k = recv(fd, p, 65536, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return sbx_err_set(err, EINVAL, "upload: the connection ended before EOF");
		sbx_buf_commit(in, (size_t)k);
	}
}

/* The child: everything of the runner but the connection (at 3) closed. */
static void __attribute__((noreturn))
child(const struct runner *r, unsigned char *pending, size_t npending, char *name, char *ref,
      int pull)
{
	struct oci_import_opts o = { r->image_dir, r->image_store_bytes, r->image_max_bytes, NULL };
	struct sbx_err err = { 0, "" };
	struct sbx_buf in;
	cJSON *out = NULL;
	sigset_t all;
	int rc;

	sigfillset(&all);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	if (pull) {
		rc = oci_pull(&o, ref, name, 0, &out, &err);
	} else {
		int spool = open(r->image_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		sbx_buf_init(&in, SBX_FRAME_MAX + SBX_FRAME_HDR + 65536);
		if (spool < 0 || !sbx_buf_reserve(&in, npending ? npending : 1)) {
			rc = sbx_err_sys(&err, "upload: spool file in %s", r->image_dir);
		} else {
			memcpy(sbx_buf_reserve(&in, npending ? npending : 1), pending, npending);
			sbx_buf_commit(&in, npending);
			rc = receive(3, &in, spool, o.max_bytes, &err);
			if (!rc && lseek(spool, 0, SEEK_SET) < 0)
				rc = sbx_err_sys(&err, "upload: spool");
			if (!rc)
				rc = oci_import_archive(&o, spool, name, &out, &err);
		}
		if (spool >= 0)
			close(spool);
	}
	if (rc < 0) {
		sbx_warn("image %s: %s refused: %s", name, pull ? "pull" : "import", err.msg);
		reply_err(3, err.code, err.msg);
	} else {
		cJSON *o2 = cJSON_CreateObject();
		sbx_info("image %s imported", name);
		cJSON_AddBoolToObject(o2, "ok", 1);
		cJSON_AddItemToObject(o2, "image", out);
		reply(3, o2);
	}
	_exit(rc < 0 ? 1 : 0);
}

void rn_image_import_op(struct runner *r, struct rn_conn *c, const cJSON *req, int pull)
{
	struct sbx_err err = { 0, "" };
	const char *name = NULL, *ref = NULL;
	char nm[64], rf[300] = "";
	unsigned char *pending = NULL;
	size_t npending = 0;
	int fd;
	pid_t pid;

	if (sbx_json_get_str(req, "name", &name, &err) <= 0 || !rn_image_name_ok(name)) {
		rn_conn_reply_err(c, "invalid", "name: 1 to 32 of a-z 0-9 - _ . , not starting "
				  "with . or -");
		return;
	}
	if (pull && (sbx_json_get_str(req, "ref", &ref, &err) <= 0 || !rn_image_ref_ok(ref))) {
		rn_conn_reply_err(c, "invalid", "ref: a registry reference, host[:port]/path[:tag]");
		return;
	}
	snprintf(nm, sizeof nm, "%s", name);
	/* a name taken already is refused by the child once the upload is
	 * in: an answer before the upload's end would be lost to the peer's
	 * reset (the runner closing with the rest unread), on both hops */
	if (ref)
		snprintf(rf, sizeof rf, "%s", ref);
	fd = rn_conn_take(c, &pending, &npending);
	if (fd < 0) {
		rn_conn_reply_err(c, "internal", "out of memory");
		return;
	}
	pid = fork();
	if (pid == 0) {
		/* the connection at 3, nothing else of the runner's: a peer of a
		 * connection the runner closes must see it closed; close-on-exec,
		 * so that a pull's skopeo never holds the answer's socket open */
		if ((fd != 3 && dup2(fd, 3) < 0) || fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
			_exit(126);
		syscall(SYS_close_range, 4, ~0u, 0);
		child(r, pending, npending, nm, rf, pull);
	}
	if (pid < 0)
		sbx_warn("image %s: fork: %s", nm, strerror(errno));
	else
		sbx_info("image %s: %s in process %d", nm, pull ? "pull" : "import", (int)pid);
	close(fd);
	free(pending);
}
