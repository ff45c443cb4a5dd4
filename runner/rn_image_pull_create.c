/* Creates' image pulls (rn_image_pull_create.h). */
#include "rn_image_pull_create.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rn_child.h"
#include "rn_image_import.h"
#include "rn_loop.h"
#include "rn_oci_pull.h"
#include "sbx_log.h"

struct rn_pull {
	char ref[256];
	char name[33];
	pid_t pid;
	int errfd;                 /* read end: the child's "code message" on failure */
	int64_t started_ms;
	rn_conn_resume_fn resume;
	struct rn_pull *next;
};

/* FNV-1a, 64 bits: a short stable tag of a reference, not a security
 * boundary (a name taken by another reference is refused, never reused). */
static uint64_t hash64(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

void rn_image_pull_name(const char *ref, char *name, size_t n)
{
	const char *base = strrchr(ref, '/');
	char stem[16];
	size_t k = 0;

	for (base = base ? base + 1 : ref; *base && *base != '@' && k < 14; base++) {
		char ch = *base;
		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		else if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' ||
			   ch == '_'))
			ch = '-';
		stem[k++] = ch;
	}
	stem[k] = '\0';
	if (!k || stem[0] == '.' || stem[0] == '-')
		snprintf(stem, sizeof stem, "image");
	snprintf(name, n, "%s-%012llx", stem,
		 (unsigned long long)(hash64(ref) & 0xffffffffffffull));
}

/* The child: pull ref as name; on failure "code message" into fd 3. */
static void __attribute__((noreturn)) child(const struct runner *r, const char *ref,
					    const char *name)
{
	struct oci_import_opts o = { r->image_dir, r->image_store_bytes, r->image_max_bytes, NULL };
	struct sbx_err err = { 0, "" };
	cJSON *out = NULL;

	rn_child_defaults();
	rn_child_stdio(1);   /* its log lines go where the runner's go */
	if (oci_pull(&o, ref, name, 0, &out, &err) < 0) {
		dprintf(3, "%s %s", rn_image_err_code(err.code), err.msg);
		_exit(1);
	}
	cJSON_Delete(out);
	_exit(0);
}

static int start(struct runner *r, struct rn_pull *p, struct sbx_err *err)
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC) < 0)
		return sbx_err_sys(err, "image pull: pipe");
	p->pid = fork();
	if (p->pid == 0) {
		/* the error pipe at 3 and nothing else of the runner's (its
		 * sockets must close when the runner closes them) */
		if (dup2(fds[1], 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
			_exit(126);   /* (skopeo, its child, must not hold it open) */
		syscall(SYS_close_range, 4, ~0u, 0);
		child(r, p->ref, p->name);
	}
	close(fds[1]);
	if (p->pid < 0) {
		close(fds[0]);
		return sbx_err_sys(err, "image pull: fork");
	}
	p->errfd = fds[0];
	p->started_ms = rn_now_mono();
	return 0;
}

void rn_image_pull_for_create(struct runner *r, struct rn_conn *c, const cJSON *req,
			      const char *ref, rn_conn_resume_fn resume)
{
	struct sbx_err err = { 0, "" };
	struct rn_pull *p;
	cJSON *copy = cJSON_Duplicate(req, 1);

	for (p = r->pulls; p; p = p->next)
		if (!strcmp(p->ref, ref))
			break;
	if (!copy || (!p && !(p = calloc(1, sizeof *p)))) {
		cJSON_Delete(copy);
		rn_conn_reply_err(c, "internal", "out of memory");
		return;
	}
	if (!p->pid) {   /* a new one */
		snprintf(p->ref, sizeof p->ref, "%s", ref);
		rn_image_pull_name(ref, p->name, sizeof p->name);
		p->resume = resume;
		if (start(r, p, &err) < 0) {
			sbx_warn("image %s: %s", ref, err.msg);
			free(p);
			cJSON_Delete(copy);
			rn_conn_reply_err(c, "internal", err.msg);
			return;
		}
		p->next = r->pulls;
		r->pulls = p;
		sbx_info("image %s: not here: pulling it for a create as %s (process %d)", ref,
			 p->name, (int)p->pid);
	} else {
		sbx_info("image %s: a create waits for the pull in flight (process %d)", ref,
			 (int)p->pid);
	}
	rn_conn_park(c, p, copy);
}

static void answer_failed(struct runner *r, struct rn_conn *c, const cJSON *req, void *arg)
{
	const char *msg = arg, *sp = strchr(msg, ' ');
	char code[32];

	(void)r;
	(void)req;
	snprintf(code, sizeof code, "%.*s", sp ? (int)(sp - msg) : 0, msg);
	rn_conn_reply_err(c, code[0] ? code : "internal", sp ? sp + 1 : msg);
}

int rn_image_pull_reaped(struct runner *r, pid_t pid, int st)
{
	struct rn_pull **pp, *p;
	char msg[600] = "";
	ssize_t k;
	int n;

	for (pp = &r->pulls; *pp && (*pp)->pid != pid; pp = &(*pp)->next)
		;
	if (!(p = *pp))
		return 0;
	*pp = p->next;
	/* the message is far below a pipe's buffer: all there once it exited */
	k = read(p->errfd, msg, sizeof msg - 1);
	msg[k > 0 ? k : 0] = '\0';
	close(p->errfd);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		n = rn_conn_unpark(r, p, p->resume, NULL);
		sbx_info("image %s: pulled as %s in %lld ms; %d create(s) go on", p->ref, p->name,
			 (long long)(rn_now_mono() - p->started_ms), n);
	} else {
		if (!msg[0])
			snprintf(msg, sizeof msg, "internal image %s: the pull ended with status %d",
				 p->ref, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		n = rn_conn_unpark(r, p, answer_failed, msg);
		sbx_warn("image %s: pull for %d create(s) failed: %s", p->ref, n,
			 strchr(msg, ' ') ? strchr(msg, ' ') + 1 : msg);
	}
	free(p);
	return 1;
}
