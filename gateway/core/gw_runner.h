/* The runners behind this gateway (gw_runners.c): a table of runners from
 * --runner-socket, --runners and --runners-dns (gw_discovery.c), each
 * asked for its `status` once a second (gw_probe.c). A sandbox id names
 * its runner (sbx_<runner>_<random>, lib/sbx_id.h), so a request finds the
 * runner of its sandbox without any state shared between gateways. */
#ifndef GW_RUNNER_H
#define GW_RUNNER_H
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define GW_RUNNER_NAME_MAX 16
#define GW_RUNNERS_MAX     256   /* table entries (an address that left DNS and stopped
				      * answering gives its entry to a new one) */
#define GW_RUNNER_ISO_MAX  8     /* isolation names a runner may report */
#define GW_PLACE_TRIES     3     /* runners a create is tried on */
#define GW_RUNNER_IMAGES_MAX 64  /* image names and references a runner may report */

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

struct gw_runner_iso {
	char name[16];
	int available;
	char reason[160];   /* why not available (its `capabilities`), "" unknown */
	char accel[16];     /* how it runs guests (vm: "kvm" or "tcg"), "" none said */
	char machine[16];   /* and on which machine (vm: "microvm" or "q35"), "" none said */
};

struct gw_up;
struct gw_runner {
	enum gw_runner_kind kind;
	char path[108];                     /* UNIX: the control socket */
	struct sockaddr_storage sa;         /* TLS: where it listens */
	socklen_t salen;
	char addr[128];                     /* for logs: "unix:/run/..." or "10.0.0.2:7443" */
	char name[GW_RUNNER_NAME_MAX + 1];  /* its name; "" until it said */
	enum gw_runner_state state;
	int64_t since_ms;                   /* when state last changed */
	/* what its last status said (gw_probe.c) */
	char instance[33];                  /* random per runner process; "" unknown */
	int draining;
	int sandboxes;
	int64_t memory_mb_free;             /* -1: not reported (a runner without `status`) */
	int64_t memory_mb_cap;
	int slots_free;
	double load1;
	int niso;
	struct gw_runner_iso iso[GW_RUNNER_ISO_MAX];
	char default_iso[16];
	/* the images it has, names and pulled references (hashed: placement
	 * prefers a runner that has a create's image; a collision only
	 * misplaces a preference, the runner still resolves the name) */
	uint64_t images[GW_RUNNER_IMAGES_MAX];
	int nimages;
	/* where it came from */
	/* Creates sent to it after the request of its last status (in flight
	 * or answered ok): its status does not count them yet, so placement
	 * counts them on top (pending_mb, pending: their sums). A newer status
	 * takes them over; a create that failed leaves at once. */
	struct gw_runner_create { uint64_t seq; int64_t mb; } recent[32];
	int nrecent;
	int64_t pending_mb;
	int pending;
	int from_dns;                       /* discovered (gw_discovery.c) */
	int gone;                           /* no longer in DNS: no creates, routing while it answers */
	int local;                          /* --runner-socket (or the embedded runner) */
	/* the probe (gw_probe.c) */
	struct gw_up *probe;                /* one in flight, or NULL */
	int64_t probe_sent_ms;
	int64_t replied_ms;                 /* its last reply to any request (gw_up.c) */
	int no_status_op;                   /* answers `ping` + `capabilities` instead */
	char why[160];                      /* why it is down or refused */
	int down_connect;                   /* down because its socket refused a connect */
	/* kept-alive connections (gw_up_keep.c) */
	int keep_alive;                     /* requests its status says it keeps a connection
					     * for; 0: it closes after each reply */
	struct gw_up *idle[4];              /* GW_UP_IDLE_MAX, most recently parked last */
	int nidle;
};

struct gw_vh;
/* The runner named by a sandbox id; NULL when the id names none known. */
struct gw_runner *gw_runner_for_sid(struct gw_vh *vh, const char *sid);
/* How a sandbox id's runner stands: GW_RUNNER_UP with *rn set when it is
 * usable; GW_RUNNER_DOWN (*rn set) when it is down; GW_RUNNER_UNKNOWN when
 * no runner has its name yet but some runner has not said its name
 * (503 as well); GW_RUNNER_REFUSED when no runner has that name (404). */
enum gw_runner_state gw_runner_route(struct gw_vh *vh, const char *sid, struct gw_runner **rn);
/* The 503 runner_unavailable message for a sandbox of rn (NULL: a runner
 * not identified yet), in buf. */
const char *gw_runner_unavailable_msg(const struct gw_runner *rn, char *buf, size_t n);
/* What a request for sandbox sid gets when its runner cannot serve it,
 * the one answer of REST, streams, previews and lookups: 503 with the
 * runner_unavailable message in msg (its runner is down, or a runner
 * that has not said its name may be it), 404 (no runner has its name),
 * or 0 with *rn usable. */
int gw_runner_route_error(struct gw_vh *vh, const char *sid, struct gw_runner **rn, char *msg,
			  size_t n);
/* Whether a request may try rn: it is up, or it is a runner on this host
 * that went down by refusing a connect (a connect answers at once
 * whether it is back, so it is tried rather than refused for up to a
 * second until its next status). A runner down for not answering, or over
 * TLS, is not tried: its requests are 503 at once, never a hang. */
int gw_runner_usable(const struct gw_runner *rn);
/* The runner of calls that name no sandbox: the local one, else the
 * first that is up. */
struct gw_runner *gw_runner_local(struct gw_vh *vh);
/* The runner name inside a sandbox id (between "sbx_" and the last '_');
 * 0, or -1 when the id carries none that fits n. */
int gw_sid_runner_name(const char *sid, char *name, size_t n);
/* Set up the table: the runner on runner_socket (--runner-socket, may be
 * NULL) and the comma-separated runners (--runners, may be NULL); 0, or
 * -1 after saying why (exit 2). */
int gw_runners_init(struct gw_vh *vh, const char *runner_socket, const char *runners);
void gw_runners_free(struct gw_vh *vh);
/* A request could not connect to rn (errno e): down at once. */
void gw_runner_failed(struct gw_vh *vh, struct gw_runner *rn, int e, const char *why);
/* Add a runner by address (a --runners entry or a discovered one); the
 * entry, or NULL with why set (a malformed address, the table full). */
struct gw_runner *gw_runners_add(struct gw_vh *vh, const char *addr, char *why, size_t whylen);
/* State changes (gw_probe.c): logs once per change. */
void gw_runner_set_state(struct gw_vh *vh, struct gw_runner *rn, enum gw_runner_state st,
			 const char *why);

struct cJSON;
const char *gw_runner_state_name(enum gw_runner_state s);
/* 1 when some runner of the table is reached over TLS. */
int gw_runners_tls(const struct gw_vh *vh);
/* The embedded runner's socket, once it listens. */
int gw_runners_add_local(struct gw_vh *vh, const char *path);
struct gw_runner *gw_runner_by_name(struct gw_vh *vh, const char *name);
/* GET /v1/runners's body: names and states, and with full (the metrics
 * key) addresses, counts, memory and reasons; GET /v1/capabilities's
 * (NULL: no runner up). */
struct cJSON *gw_runners_json(struct gw_vh *vh, int full);
struct cJSON *gw_runners_capabilities(struct gw_vh *vh);
/* /metrics lines of the table into b; their length. */
int gw_runners_metrics(struct gw_vh *vh, char *b, size_t n);
/* gw_runner_watch.c: a UNIX runner stopped listening: the WebSocket
 * sessions of its sandboxes (straight to their agents) end. */
void gw_runner_watch_lost(struct gw_vh *vh, struct gw_runner *rn);
/* gw_probe.c: ask every runner its status, every GW_PROBE_EVERY_MS. */
#define GW_PROBE_EVERY_MS   1000
#define GW_PROBE_TIMEOUT_MS 1500
void gw_probe_start(struct gw_vh *vh);
void gw_probe_stop(struct gw_vh *vh);
/* rn's entry is given to another address: its probe bookkeeping restarts. */
void gw_probe_forget(struct gw_vh *vh, struct gw_runner *rn);
/* 1 while some runner has neither answered nor failed its first probe. */
int gw_probe_first_round(struct gw_vh *vh);
/* Ask rn its status at the next tick (a request saw a sign it is gone). */
void gw_probe_soon(struct gw_vh *vh, struct gw_runner *rn);
/* Ask every runner that is not up (down, or not answered yet; not one
 * refused, nor one that left DNS) its status now, and call w->cb once each
 * of them answered or failed (at once when none is to be asked). For a
 * create that found no runner up: one restarted a moment ago is up again
 * before its next periodic status says so. Callers waiting at the same
 * time share the round. */
struct gw_probe_wait {
	struct gw_probe_wait *next;
	void (*cb)(struct gw_probe_wait *w);
};
void gw_probe_again(struct gw_vh *vh, struct gw_probe_wait *w, void (*cb)(struct gw_probe_wait *w));
void gw_probe_wait_cancel(struct gw_probe_wait *w);
/* Apply a status (or ping/capabilities) reply object to rn: 0, or -1 with
 * rn refused (a bad or taken name). */
int gw_probe_apply(struct gw_vh *vh, struct gw_runner *rn, const struct cJSON *o, uint64_t seq);
/* gw_discovery.c: --runners-dns */
int gw_discovery_start(struct gw_vh *vh, const char *name, int port, int interval_ms);
void gw_discovery_collect(struct gw_vh *vh);   /* on the loop, after lws_cancel_service */
void gw_discovery_stop(void);

/* ---- pure helpers (gw_rtable.c; unit-tested) ---- */
/* The order of requests sent to runners (creates and status requests). */
uint64_t gw_runner_seq_next(void);
/* A create (of mb) sent as request seq; its end (failed: it leaves); a
 * status whose request was seq: the creates sent before it are in it. */
void gw_runner_create_sent(struct gw_runner *rn, uint64_t seq, int64_t mb);
void gw_runner_create_failed(struct gw_runner *rn, uint64_t seq);
void gw_runner_status_seen(struct gw_runner *rn, uint64_t seq);
/* Placement: the indexes of the runners a create of memory_mb with
 * isolation iso (NULL: each runner's default) may go to, best first
 * (memory_mb_free desc, then sandboxes asc, then load1 asc, each with the
 * creates still pending there counted; a runner that does not report
 * memory after those that do), at most max. */
int gw_place_order(const struct gw_runner *const *rs, int n, const char *iso, int64_t memory_mb,
		   int *out, int max);
/* The hash of an image name or reference as gw_runner.images keeps it. */
uint64_t gw_image_hash(const char *s);
/* 1 when rs reported image (a name or a pulled reference) in its status. */
int gw_runner_has_image(const struct gw_runner *rs, const char *image);
/* Reorder order[0..n) (indexes into rs) so the runners that have image
 * come first, each group in its order (stable). */
void gw_place_prefer_image(const struct gw_runner *const *rs, int *order, int n,
			   const char *image);
/* Why runner rs is no candidate for that create ("" when it is one). */
const char *gw_place_why_not(const struct gw_runner *rs, const char *iso, int64_t memory_mb,
			     char *buf, size_t n);
/* Whether iso is a name some runner of rs knows (1), and available on
 * one that is up (2); 0 when none knows it. */
int gw_place_iso_known(const struct gw_runner *const *rs, int n, const char *iso);
/* Whether rs offers isolation iso (NULL: its default): 1 available, 0
 * known but not available (*reason: why, "" unknown), -1 unknown to rs. */
int gw_runner_iso_state(const struct gw_runner *rs, const char *iso, const char **reason);
/* Discovery: have[i] are the table's discovered addresses, got[j] what
 * the name resolves to now. keep[i] = 1 when have[i] is still there;
 * add[j] = 1 when got[j] is new (not in have, not a repeat in got). */
void gw_discovery_merge(const char *const *have, int nhave, const char *const *got, int ngot,
			int *keep, int *add);
#endif
