/* The runners behind this gateway (gw_runners.c). Today: the one local
 * runner on its UNIX socket. A sandbox id names its runner
 * (sbx_<runner>_<random>, lib/sbx_id.h), so a request finds the runner of
 * its sandbox without any state shared between gateways. */
#ifndef GW_RUNNER_H
#define GW_RUNNER_H
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define GW_RUNNER_NAME_MAX 16

enum gw_runner_kind {
	GW_RUNNER_UNIX,     /* same host: control socket path, fd passing, direct agent path */
	GW_RUNNER_TLS,      /* another host: TCP + mutual TLS, the runner relays every stream */
};

enum gw_runner_state {
	GW_RUNNER_UNKNOWN,  /* has not answered a status yet */
	GW_RUNNER_UP,
	GW_RUNNER_DOWN,     /* stopped answering: its sandboxes answer 503 runner_unavailable */
	GW_RUNNER_REFUSED,  /* its certificate does not name it, or its name is taken */
};

struct gw_runner {
	enum gw_runner_kind kind;
	char path[108];                     /* UNIX: the control socket */
	struct sockaddr_storage sa;         /* TLS: where it listens */
	socklen_t salen;
	char addr[128];                     /* for logs: "unix:/run/..." or "10.0.0.2:7443" */
	char name[GW_RUNNER_NAME_MAX + 1];  /* its name; "" until it said */
	enum gw_runner_state state;
	int64_t since_ms;                   /* when state last changed */
};

struct gw_vh;
/* The runner named by a sandbox id; NULL when the id names none known. */
struct gw_runner *gw_runner_for_sid(struct gw_vh *vh, const char *sid);
/* The runner of calls that name no sandbox (the local one). */
struct gw_runner *gw_runner_local(struct gw_vh *vh);
/* The runner name inside a sandbox id (between "sbx_" and the last '_');
 * 0, or -1 when the id carries none that fits n. */
int gw_sid_runner_name(const char *sid, char *name, size_t n);
/* Set up the table from the flags (today: the local runner's socket). */
int gw_runners_init(struct gw_vh *vh);
void gw_runners_free(struct gw_vh *vh);
#endif
