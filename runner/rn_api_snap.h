/* The control API's snapshot and pause operations (rn_api_snap.c). */
#ifndef RN_API_SNAP_H
#define RN_API_SNAP_H

#include "rn_conn.h"

/* Handle op when it is one of them (1, replied), else 0. */
int rn_api_snap(struct runner *r, struct rn_conn *c, const char *op, const cJSON *req);

#endif
