/* Per-name rules of a network policy, in the shape of Vercel's SDK
 * (docs/api.md "Network policy"): each rule may `match` a request (path,
 * method, query string, headers) and then either `transform` it (headers
 * set on the way out: credential brokering), `forwardURL` it (to another
 * HTTPS origin), or answer it with a `response` of the proxy's own. The
 * egress proxy decrypts a name with rules (rn_egress_mitm.c) and applies
 * the first rule whose match holds. A pure module: parsing, matching,
 * showing with the secrets redacted. */
#ifndef RN_RULES_H
#define RN_RULES_H

#include <regex.h>
#include <stddef.h>

#include <cJSON.h>

#include "sbx_err.h"

#define RN_RULES_MAX 32         /* rules per name */
#define RN_RULE_KV_MAX 16       /* header or query matchers per rule */
#define RN_RULE_HDR_MAX 32      /* headers a transform sets or a response has */
#define RN_RULE_TEXT_MAX 8192   /* one string of a rule */
#define RN_RULE_BODY_MAX 65536  /* a response body */

enum rn_str_kind { RN_STR_ANY, RN_STR_EXACT, RN_STR_PREFIX, RN_STR_REGEX };

struct rn_str_match {
	enum rn_str_kind kind;
	char *s;
	regex_t re;             /* RN_STR_REGEX: POSIX extended, unanchored */
};

struct rn_kv_match {
	struct rn_str_match key, value;
};

struct rn_hdr {
	char *name, *value;
};

enum rn_rule_kind { RN_RULE_TRANSFORM, RN_RULE_FORWARD, RN_RULE_RESPONSE };

struct rn_rule {
	struct rn_str_match path;
	int n_methods;
	char *methods[16];
	int n_query, n_headers;
	struct rn_kv_match query[RN_RULE_KV_MAX], headers[RN_RULE_KV_MAX];
	enum rn_rule_kind kind;
	int n_set;                      /* transform: headers set; response: its headers */
	struct rn_hdr set[RN_RULE_HDR_MAX];
	char *forward_url;              /* "https://host[:port][/path]" */
	int status;
	char *body, *content_type;      /* response; body may be NULL */
};

struct rn_rules {
	int n;
	struct rn_rule *r;
	cJSON *src;                     /* as given, for a copy (rn_rules_dup) */
};

/* The rules list v of name (for error messages) into *out (NULL for an
 * empty list: the name is spliced, never decrypted). 0 or -1 with err
 * naming the field (EINVAL). */
int rn_rules_parse(const cJSON *v, const char *name, struct rn_rules **out,
		   struct sbx_err *err);
void rn_rules_free(struct rn_rules *r);
/* A copy of its own (the proxy's threads keep the rules they started
 * with while a policy update replaces the policy). NULL when out of memory. */
struct rn_rules *rn_rules_dup(const struct rn_rules *r);

/* The rules as the API shows them: transform values "<redacted>". */
cJSON *rn_rules_json(const struct rn_rules *r);

/* What a request looks like to a matcher. */
struct rn_req_view {
	const char *method;             /* NUL-terminated */
	const char *path;               /* without the query, NUL-terminated */
	const char *query;              /* after '?', or "" */
	int n_headers;
	const char *const *hnames, *const *hvalues;   /* NUL-terminated each */
};

/* The first rule of r whose match holds for q, or NULL. */
const struct rn_rule *rn_rules_pick(const struct rn_rules *r, const struct rn_req_view *q);

/* "https://host[:port][/path]" into its parts; 0 or -1. */
int rn_forward_url_split(const char *url, char *host, size_t hostn, int *port,
			 char *path, size_t pathn);

#endif
