/* The `list` operation of the control API (rn_list.c). */
#ifndef RN_LIST_H
#define RN_LIST_H
#include <cJSON.h>
#include "rn_conn.h"

#define RN_LIST_LIMIT_MAX 1000   /* sandboxes in one paged reply, at most */

/* Replies to req: {"ok":true,"sandboxes":[...]} with "next" (paged, more
 * follow) or "truncated" (whole, some left out); invalid arguments get
 * an "invalid" error. */
void rn_list(struct runner *r, struct rn_conn *c, const cJSON *req);

#endif
