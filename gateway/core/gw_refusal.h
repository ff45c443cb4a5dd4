/* Why an upstream operation failed, as a value every front end answers in
 * its own form (an HTTP error body, a WebSocket error message and close):
 * the status, the API's error code (docs/api.md) and the message. */
#ifndef GW_REFUSAL_H
#define GW_REFUSAL_H
#include <cJSON.h>

struct gw_vh;
struct gw_up;
struct gw_runner;

struct gw_refusal {
	int status;
	const char *code;           /* a string constant */
	char msg[600];
};

/* The runner's or agent's error reply ({"ok":false,"error":{code,message}})
 * in the API's terms; a code the API does not know is 500 internal and
 * counts as an upstream error. */
void gw_refusal_reply(struct gw_vh *vh, const cJSON *reply, struct gw_refusal *out);
/* gw_up_open's (or gw_up_open_runner's) error rc, u the upstream it
 * failed on, for sandbox sid ("" for a runner operation) on runner rn
 * (NULL: not known). Reads errno for GW_UP_ECONNECT. */
void gw_refusal_open(struct gw_vh *vh, const struct gw_up *u, int rc, struct gw_runner *rn,
		     const char *sid, struct gw_refusal *out);
/* An upstream that failed with why: in_reply, no reply to its first
 * request came (ops->reply without an object); else its bytes were no
 * frames or it could not be reached (ops->fail). */
void gw_refusal_upstream(const struct gw_up *u, const char *why, int in_reply,
			 struct gw_refusal *out);
#endif
