#include "rn_policy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rn_net.h"
#include "sbx_sni.h"

int rn_cidr_parse(const char *s, struct rn_cidr *c)
{
	char ip[16];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	struct in_addr a;
	long len = 32;

	if (n == 0 || n >= sizeof(ip))
		return -1;
	memcpy(ip, s, n);
	ip[n] = '\0';
	if (inet_pton(AF_INET, ip, &a) != 1)
		return -1;
	if (slash) {
		char *end;
		if (slash[1] < '0' || slash[1] > '9')
			return -1;
		len = strtol(slash + 1, &end, 10);
		if (*end || len < 0 || len > 32 || end - slash > 3)
			return -1;
	}
	c->mask = len == 0 ? 0 : 0xffffffffu << (32 - len);
	c->net = ntohl(a.s_addr) & c->mask;
	return 0;
}

void rn_policy_free(struct rn_policy *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n_allow; i++) {
		free(p->allow[i]);
		rn_rules_free(p->rules[i]);
	}
	free(p);
}

static int is_ipv4(const char *s)
{
	struct in_addr a;

	return inet_pton(AF_INET, s, &a) == 1;
}

/* One allow pattern: a name, "*." and a name, or "*". */
static int add_pattern(struct rn_policy *p, const char *s, const char *field,
		       struct sbx_err *err)
{
	const char *name = s;
	char low[SBX_PEEK_NAME_MAX] = "";
	size_t n;

	if (p->n_allow >= RN_POLICY_MAX_ALLOW)
		return sbx_err_set(err, EINVAL, "%s: at most %d names", field, RN_POLICY_MAX_ALLOW);
	if (strcmp(s, "*") != 0) {
		if (strncmp(s, "*.", 2) == 0)
			name = s + 2;
		n = strlen(name);
		if (n > 0 && name[n - 1] == '.')
			n--;
		if (n == 0 || n >= sizeof(low))
			return sbx_err_set(err, EINVAL, "%s: \"%.80s\" is not a domain name", field, s);
		for (size_t i = 0; i < n; i++)
			low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
		low[n] = '\0';
		if (!sbx_peek_name_ok(low) || is_ipv4(low))
			return sbx_err_set(err, EINVAL, "%s: \"%.80s\" is not a domain name (a "
					   "name, \"*.\" and a name, or \"*\"; no addresses)", field, s);
	}
	char *copy = malloc(strlen(low) + 3);
	if (!copy)
		return sbx_err_set(err, ENOMEM, "out of memory");
	if (strcmp(s, "*") == 0)
		strcpy(copy, "*");
	else
		sprintf(copy, "%s%s", name != s ? "*." : "", low);
	p->allow[p->n_allow++] = copy;
	return 0;
}

static int parse_allow(struct rn_policy *p, const cJSON *allow, struct sbx_err *err)
{
	const cJSON *it;
	int i = 0;

	if (!allow)
		return 0;
	if (cJSON_IsArray(allow)) {
		cJSON_ArrayForEach(it, allow) {
			char field[40];
			snprintf(field, sizeof(field), "network.allow[%d]", i++);
			if (!cJSON_IsString(it))
				return sbx_err_set(err, EINVAL, "%s: expected a string", field);
			if (add_pattern(p, it->valuestring, field, err) < 0)
				return -1;
		}
		return 0;
	}
	if (!cJSON_IsObject(allow))
		return sbx_err_set(err, EINVAL, "network.allow: expected a list of names or an "
				   "object of name -> rules");
	p->rules_form = 1;
	cJSON_ArrayForEach(it, allow) {
		if (add_pattern(p, it->string, "network.allow", err) < 0 ||
		    rn_rules_parse(it, it->string, &p->rules[p->n_allow - 1], err) < 0)
			return -1;
	}
	return 0;
}

static int parse_cidrs(struct rn_policy *p, const cJSON *v, struct sbx_err *err)
{
	const cJSON *it;

	if (!v)
		return 0;
	if (!cJSON_IsArray(v))
		return sbx_err_set(err, EINVAL, "network.deny_cidrs: expected a list of CIDRs");
	cJSON_ArrayForEach(it, v) {
		if (p->n_cidrs >= RN_POLICY_MAX_CIDRS)
			return sbx_err_set(err, EINVAL, "network.deny_cidrs: at most %d",
					   RN_POLICY_MAX_CIDRS);
		if (!cJSON_IsString(it) || rn_cidr_parse(it->valuestring, &p->cidrs[p->n_cidrs]) < 0)
			return sbx_err_set(err, EINVAL, "network.deny_cidrs[%d]: expected an IPv4 "
					   "CIDR such as \"203.0.113.0/24\"", p->n_cidrs);
		p->n_cidrs++;
	}
	return 0;
}

int rn_policy_parse(const cJSON *v, enum rn_network *mode, struct rn_policy **out,
		    struct sbx_err *err)
{
	struct rn_policy *p;
	const cJSON *f;

	*out = NULL;
	*mode = RN_NET_DENY_ALL;
	if (!v)
		return 0;
	if (cJSON_IsString(v)) {
		if (strcmp(v->valuestring, "deny-all") == 0)
			return 0;
		if (strcmp(v->valuestring, "allow-all") == 0) {
			*mode = RN_NET_ALLOW_ALL;
			return 0;
		}
		return sbx_err_set(err, EINVAL, "network: expected \"deny-all\", \"allow-all\" "
				   "or {\"allow\":[names],\"deny_cidrs\":[cidrs]}");
	}
	if (!cJSON_IsObject(v))
		return sbx_err_set(err, EINVAL, "network: expected \"deny-all\", \"allow-all\" "
				   "or {\"allow\":[names],\"deny_cidrs\":[cidrs]}");
	cJSON_ArrayForEach(f, v)
		if (strcmp(f->string, "allow") != 0 && strcmp(f->string, "deny_cidrs") != 0)
			return sbx_err_set(err, EINVAL, "network.%.40s: unknown field (allow, "
					   "deny_cidrs)", f->string);
	p = calloc(1, sizeof(*p));
	if (!p)
		return sbx_err_set(err, ENOMEM, "out of memory");
	if (parse_allow(p, cJSON_GetObjectItemCaseSensitive(v, "allow"), err) < 0 ||
	    parse_cidrs(p, cJSON_GetObjectItemCaseSensitive(v, "deny_cidrs"), err) < 0) {
		rn_policy_free(p);
		return -1;
	}
	*mode = RN_NET_POLICY;
	*out = p;
	return 0;
}

cJSON *rn_policy_json(enum rn_network mode, const struct rn_policy *p)
{
	cJSON *o, *a;

	if (mode != RN_NET_POLICY || !p)
		return cJSON_CreateString(rn_network_name(mode));
	o = cJSON_CreateObject();
	if (p->rules_form) {
		a = cJSON_AddObjectToObject(o, "allow");
		for (int i = 0; i < p->n_allow; i++)
			cJSON_AddItemToObject(a, p->allow[i], rn_rules_json(p->rules[i]));
	} else {
		a = cJSON_AddArrayToObject(o, "allow");
		for (int i = 0; i < p->n_allow; i++)
			cJSON_AddItemToArray(a, cJSON_CreateString(p->allow[i]));
	}
	a = cJSON_AddArrayToObject(o, "deny_cidrs");
	for (int i = 0; i < p->n_cidrs; i++) {
		char s[24];
		uint32_t n = p->cidrs[i].net;
		int len = __builtin_popcount(p->cidrs[i].mask);
		snprintf(s, sizeof(s), "%u.%u.%u.%u/%d", n >> 24, (n >> 16) & 255, (n >> 8) & 255,
			 n & 255, len);
		cJSON_AddItemToArray(a, cJSON_CreateString(s));
	}
	return o;
}

static int match_index(const struct rn_policy *p, const char *name);

const char *rn_policy_match(const struct rn_policy *p, const char *name)
{
	int i = match_index(p, name);

	return i < 0 ? NULL : p->allow[i];
}

const struct rn_rules *rn_policy_rules(const struct rn_policy *p, const char *name)
{
	int i = match_index(p, name);

	return i < 0 ? NULL : p->rules[i];
}

/* The most specific pattern that allows name: the name itself, else the
 * longest "*.suffix", else "*" (so a name's rules apply whatever order
 * the patterns came in). */
static int match_index(const struct rn_policy *p, const char *name)
{
	size_t n = strlen(name), best_len = 0;
	int best = -1, star = -1;

	if (!p || is_ipv4(name))
		return -1;
	for (int i = 0; i < p->n_allow; i++) {
		const char *pat = p->allow[i];
		if (strcmp(pat, "*") == 0) {
			if (star < 0)
				star = i;
		} else if (strncmp(pat, "*.", 2) == 0) {
			/* a subdomain of the suffix, at any depth; not the suffix itself */
			size_t sn = strlen(pat + 1);          /* ".suffix" */
			if (n > sn && strcmp(name + n - sn, pat + 1) == 0 && sn > best_len) {
				best = i;
				best_len = sn;
			}
		} else if (strcmp(pat, name) == 0) {
			return i;
		}
	}
	return best >= 0 ? best : star;
}

const char *rn_policy_addr_denied(const struct rn_policy *p, uint32_t addr)
{
	for (int i = 0; rn_net_denied[i]; i++) {
		struct rn_cidr c;
		if (rn_cidr_parse(rn_net_denied[i], &c) == 0 && (addr & c.mask) == c.net)
			return "always-denied";
	}
	for (int i = 0; p && i < p->n_cidrs; i++)
		if ((addr & p->cidrs[i].mask) == p->cidrs[i].net)
			return "deny_cidrs";
	return NULL;
}
