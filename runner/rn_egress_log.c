/* A sandbox's egress log: the last EG_LOG_MAX decisions of its resolver
 * and proxy, numbered, in a ring (bounded memory whatever it does). */
#include "rn_egress_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx_json.h"

void eg_log_add(struct rn_egress *e, const char *name, int port, int allowed,
		const char *rule, unsigned long long out, unsigned long long in)
{
	pthread_mutex_lock(&eg_mx);
	eg_log_add_locked(e, name, port, allowed, rule, out, in);
	pthread_mutex_unlock(&eg_mx);
}

void eg_log_add_locked(struct rn_egress *e, const char *name, int port, int allowed,
		       const char *rule, unsigned long long out, unsigned long long in)
{
	struct eg_entry *x;

	if (!e->log && !(e->log = calloc(EG_LOG_MAX, sizeof(*e->log))))
		return;
	x = &e->log[(e->log_next - 1) % EG_LOG_MAX];
	x->seq = e->log_next++;
	x->time_ms = rn_now_wall();
	snprintf(x->name, sizeof(x->name), "%s", name);
	x->port = (uint16_t)port;
	x->allowed = (uint8_t)allowed;
	snprintf(x->rule, sizeof(x->rule), "%s", rule ? rule : "");
	x->bytes_out = out;
	x->bytes_in = in;
}

cJSON *rn_egress_log_json(const struct rn_sandbox *sb, unsigned long long since)
{
	const struct rn_egress *e = sb->egress;
	cJSON *a = cJSON_CreateArray();
	unsigned long long first;

	if (!e)
		return a;
	pthread_mutex_lock(&eg_mx);
	if (!e->log) {
		pthread_mutex_unlock(&eg_mx);
		return a;
	}
	first = e->log_next > EG_LOG_MAX ? e->log_next - EG_LOG_MAX : 1;
	if (since + 1 > first)
		first = since + 1;
	for (unsigned long long s = first; s < e->log_next; s++) {
		const struct eg_entry *x = &e->log[(s - 1) % EG_LOG_MAX];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "seq", (double)x->seq);
		cJSON_AddNumberToObject(o, "time_ms", (double)x->time_ms);
		cJSON_AddStringToObject(o, "name", x->name);
		cJSON_AddNumberToObject(o, "port", x->port);
		cJSON_AddStringToObject(o, "verdict", x->allowed ? "allowed" : "denied");
		cJSON_AddStringToObject(o, "rule", x->rule);
		cJSON_AddNumberToObject(o, "bytes_out", (double)x->bytes_out);
		cJSON_AddNumberToObject(o, "bytes_in", (double)x->bytes_in);
		cJSON_AddItemToArray(a, o);
	}
	pthread_mutex_unlock(&eg_mx);
	return a;
}
