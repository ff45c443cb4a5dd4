/* DNS messages as the runner's resolver reads and writes them (RFC 1035):
 * a sandbox's query in, an answer the runner builds out; a query of the
 * runner's own to the host's resolver out, its A records in. A pure
 * module: bytes in, bytes out, reading only inside the given buffers. */
#ifndef RN_DNS_WIRE_H
#define RN_DNS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define RN_DNS_MSG_MAX 512     /* UDP without EDNS: all the runner sends */
#define RN_DNS_MAX_ADDRS 8

enum { RN_DNS_T_A = 1, RN_DNS_T_AAAA = 28 };
enum { RN_DNS_NOERROR = 0, RN_DNS_SERVFAIL = 2, RN_DNS_NXDOMAIN = 3, RN_DNS_NOTIMP = 4,
       RN_DNS_REFUSED = 5 };

struct rn_dns_query {
	uint16_t id, flags, qtype, qclass;
	char name[256];          /* lower-case, dotted, no trailing dot ("" root) */
	size_t question_len;     /* bytes of the question section as sent */
	const unsigned char *question;
};

/* Read a query of one question. 0, or -1 for anything else (a reply, two
 * questions, compression in the question, a name of other characters than
 * letters, digits, '-' and '_'). */
int rn_dns_parse_query(const unsigned char *p, size_t n, struct rn_dns_query *q);

/* An answer to q with rcode and the given IPv4 addresses (network byte
 * order; only when rcode is NOERROR and q asked for A) into out (at least
 * RN_DNS_MSG_MAX). Returns its length. */
size_t rn_dns_answer(const struct rn_dns_query *q, int rcode, const uint32_t *addrs,
		     int n_addrs, uint32_t ttl, unsigned char *out);

/* A recursive A query for name with id into out (RN_DNS_MSG_MAX). Its
 * length, or 0 when name does not fit a DNS name. */
size_t rn_dns_build_a_query(uint16_t id, const char *name, unsigned char *out);

/* The reply at [p, p+n) to our A query id for name: its rcode (>= 0) and
 * up to RN_DNS_MAX_ADDRS A records (network byte order) in addrs with
 * their count in *n_addrs and the least TTL in *ttl; -1 when it is not
 * that reply or is malformed. */
int rn_dns_parse_a_reply(const unsigned char *p, size_t n, uint16_t id, const char *name,
			 uint32_t *addrs, int *n_addrs, uint32_t *ttl);

#endif
