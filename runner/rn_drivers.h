/* The driver registry and the isolation a create asks for: which drivers
 * this runner knows, which are enabled (--drivers) and available (probe,
 * init), which is the default (--default-isolation). */
#ifndef RN_DRIVERS_H
#define RN_DRIVERS_H

#include <cJSON.h>

#include "runner.h"

/* Fill r->drivers with every driver of the registry; enable the names in
 * list (comma-separated; NULL: all of them) and make default_name the
 * default. -1 with err for a name the registry does not know, or a
 * default that is not enabled. */
int rn_drivers_setup(struct runner *r, const char *list, const char *default_name,
		     int agent_stderr, struct sbx_err *err);
/* Probe and init each enabled driver; one log line each, available or
 * not and why. Never fails: an unavailable driver is only listed so. */
void rn_drivers_init(struct runner *r);
/* Reconcile the sandbox dirs of a previous run: each dir goes to the
 * driver its RN_DRIVER_FILE names when that driver is enabled and its
 * probe passed; a dir of any other driver is left as it is, logged once
 * per driver name; a dir with no mark (the runner died before any driver
 * made anything in it) is removed. Then each driver's own
 * reconcile. */
void rn_drivers_reconcile(struct runner *r);
/* The driver a create asks for (isolation NULL: the default). NULL with
 * err: ENOENT when no driver has that name (the message lists the known
 * ones), ENOTSUP when it is known but not available here (the message
 * gives the reason). */
struct rn_driver *rn_drivers_pick(struct runner *r, const char *isolation,
				  struct sbx_err *err);
/* {"isolation":[{"name","available","reason"}...],"default":name} */
cJSON *rn_drivers_json(const struct runner *r);
/* The driver named in a sandbox dir's RN_DRIVER_FILE, written by the
 * runner before the driver's start. 0 or -1 with errno. */
int rn_driver_mark_dir(const char *dir, const char *name);

#endif
