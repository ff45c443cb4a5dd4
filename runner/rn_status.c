#include "rn_status.h"
#include "rn_warm.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

#include "rn_admit.h"
#include "rn_conn.h"
#include "rn_images.h"
#include "rn_sandbox.h"
#include "sbx_log.h"

int rn_status_init(struct runner *r, struct sbx_err *err)
{
	unsigned char rnd[16];
	size_t got = 0;

	while (got < sizeof(rnd)) {
		ssize_t n = getrandom(rnd + got, sizeof(rnd) - got, 0);
		if (n < 0 && errno != EINTR)
			return sbx_err_sys(err, "getrandom");
		if (n > 0)
			got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(r->instance + 2 * i, 3, "%02x", rnd[i]);
	return 0;
}

/* CPUs this process may run on (its affinity: what a container got). */
static int cpus(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

cJSON *rn_status_json(const struct runner *r)
{
	cJSON *o = cJSON_CreateObject(), *a;
	struct rn_admit_in in;
	int64_t free_mb;
	double load[1] = { 0 };

	/* the figures in use as last read by a create: status reads no cgroup */
	rn_admit_figures(r, &in);
	free_mb = rn_admit_free_mb(&in);
	if (getloadavg(load, 1) < 1)
		load[0] = 0;
	cJSON_AddStringToObject(o, "name", r->name);
	cJSON_AddStringToObject(o, "instance", r->instance);
	cJSON_AddBoolToObject(o, "draining", r->draining);
	/* the warm pool's are nobody's sandboxes: counted apart */
	cJSON_AddNumberToObject(o, "sandboxes", r->n_live - r->n_warm);
	cJSON_AddNumberToObject(o, "warm_pool", r->warm_size);
	cJSON_AddNumberToObject(o, "warm", r->n_warm);
	cJSON_AddNumberToObject(o, "warm_ready", rn_warm_ready(r));
	cJSON_AddNumberToObject(o, "memory_mb_cap", (double)rn_admit_limits_cap(&in));
	cJSON_AddNumberToObject(o, "memory_mb_used", (double)in.committed_mb);
	if (r->overcommit > 0) {
		cJSON_AddNumberToObject(o, "memory_overcommit", r->overcommit);
		cJSON_AddNumberToObject(o, "memory_mb_in_use", (double)in.used_mb);
		cJSON_AddNumberToObject(o, "memory_mb_budget", (double)in.budget_mb);
	}
	cJSON_AddNumberToObject(o, "memory_mb_free", (double)free_mb);
	cJSON_AddNumberToObject(o, "slots_free", (double)(free_mb / RN_SLOT_MB));
	/* two decimals are all a placement needs; fewer digits in every probe */
	cJSON_AddNumberToObject(o, "load1", (double)(long)(load[0] * 100 + 0.5) / 100);
	cJSON_AddNumberToObject(o, "cpus", cpus());
	cJSON_AddNumberToObject(o, "keep_alive_requests", RN_KEEP_REQUESTS);
	a = cJSON_AddArrayToObject(o, "isolation");
	for (int i = 0; i < r->n_drivers; i++) {
		cJSON *it = cJSON_CreateObject();
		cJSON_AddStringToObject(it, "name", r->drivers[i].ops->name);
		cJSON_AddBoolToObject(it, "available", r->drivers[i].available);
		/* how a vm runs guests, for an operator reading the status */
		if (r->drivers[i].available && r->drivers[i].accel[0])
			cJSON_AddStringToObject(it, "accel", r->drivers[i].accel);
		if (r->drivers[i].available && r->drivers[i].machine[0])
			cJSON_AddStringToObject(it, "machine", r->drivers[i].machine);
		cJSON_AddItemToArray(a, it);
	}
	cJSON_AddStringToObject(o, "default_isolation", r->default_drv->ops->name);
	/* what a gateway's placement prefers for a create naming one */
	cJSON_AddItemToObject(o, "images", rn_images_held(r));
	return o;
}

void rn_drain_set(struct runner *r, int on, const char *how)
{
	if (r->draining == !!on)
		return;
	r->draining = !!on;
	if (on)
		rn_warm_flush(r, NULL);   /* a drained runner runs out, the pool included */
	if (on)
		sbx_info("runner %s draining (%s): no new sandboxes; its %d sandbox(es) run out",
			 r->name, how, r->n_live);
	else
		sbx_info("runner %s no longer draining (%s): creates accepted again", r->name,
			 how);
}
