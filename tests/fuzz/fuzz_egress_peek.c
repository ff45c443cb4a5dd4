/* libFuzzer target: a sandbox's first bytes through the egress proxy's
 * parsers (lib/sbx_sni.c), as a TLS ClientHello and as an HTTP request
 * head, and the same bytes as a network policy (runner/rn_policy.c) and a
 * DNS query (runner/rn_dns_wire.c). A name found is a valid name. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "sbx_sni.h"
#include "../../runner/rn_dns_wire.h"
#include "../../runner/rn_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[SBX_PEEK_NAME_MAX];
	struct rn_dns_query q;
	unsigned char ans[RN_DNS_MSG_MAX];
	uint32_t addrs[RN_DNS_MAX_ADDRS], ttl;
	int n;

	if (sbx_sni_peek(data, size, out) == SBX_PEEK_NAME && !sbx_peek_name_ok(out))
		__builtin_trap();
	if (sbx_host_peek(data, size, out) == SBX_PEEK_NAME && !sbx_peek_name_ok(out))
		__builtin_trap();
	if (rn_dns_parse_query(data, size, &q) == 0) {
		uint32_t a = 0x01020304;
		if (rn_dns_answer(&q, 0, &a, 1, 60, ans) > RN_DNS_MSG_MAX)
			__builtin_trap();
	}
	rn_dns_parse_a_reply(data, size, size >= 2 ? (uint16_t)(data[0] << 8 | data[1]) : 0,
			     "a.test", addrs, &n, &ttl);
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	cJSON *v = cJSON_Parse(s);
	free(s);
	if (v) {
		struct sbx_err err = { 0, "" };
		struct rn_policy *p = NULL;
		enum rn_network mode;
		if (rn_policy_parse(v, &mode, &p, &err) == 0 && p) {
			cJSON *back = rn_policy_json(mode, p);
			if (!back)
				__builtin_trap();
			cJSON_Delete(back);
			rn_policy_match(p, "a.test");
			rn_policy_free(p);
		}
		cJSON_Delete(v);
	}
	return 0;
}
