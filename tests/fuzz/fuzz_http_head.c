/* libFuzzer target: untrusted bytes from a client through the preview
 * proxy's parsers (gateway/proxy/gw_http1.c, gw_sni.c, gw_phost.c): a request
 * head (its leading empty lines too), the front door's Host hint from the
 * same bytes, what follows the head as a chunked body, the same bytes as a
 * TLS ClientHello, and the Host value as a preview host. Checks that every
 * span the head parser reports lies inside the head. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../gateway/proxy/gw_http1.h"
#include "../../gateway/proxy/gw_sni.h"
#include "../../gateway/proxy/gw_proxy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void in_head(const struct gw_h1_span *s, size_t head_len)
{
	if ((size_t)s->off + s->len > head_len)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gw_h1_head h;
	const char *p = (const char *)data;
	char out[256], sid[80];
	int port;

	gw_sni_parse(data, size, out, sizeof out);
	long lead = gw_h1_lead(p, size);
	if (lead > (long)size || lead > 2 * GW_H1_LEAD_MAX)
		__builtin_trap();
	/* the front door's routing hint: a found Host is a string in out */
	if (gw_h1_sniff_host(p, size, out, sizeof out) == 1 && !memchr(out, '\0', sizeof out))
		__builtin_trap();
	int rc = gw_h1_parse(p, size, &h);
	if (rc > 0 && (lead < 0 || h.method.off != (uint32_t)lead))
		__builtin_trap();   /* the request line starts right after the empty lines */
	if (rc > 0) {
		if ((size_t)rc > size || (size_t)rc > GW_H1_HEAD_MAX || (h.chunked && h.content_length >= 0))
			__builtin_trap();
		in_head(&h.method, (size_t)rc);
		in_head(&h.target, (size_t)rc);
		for (int i = 0; i < h.nhdr; i++) {
			in_head(&h.hdr[i].line, (size_t)rc);
			in_head(&h.hdr[i].value, (size_t)rc);
		}
		if (h.host >= 0 && !gw_phost_parse(p + h.hdr[h.host].value.off,
						   h.hdr[h.host].value.len, "localhost",
						   &port, sid, sizeof sid) && (port < 1 || port > 65535))
			__builtin_trap();
		struct gw_h1_chunk c;
		gw_h1_chunk_init(&c);
		long k = gw_h1_chunk_feed(&c, p + rc, size - (size_t)rc);
		if (k > (long)(size - (size_t)rc) || (k >= 0 && k < (long)(size - (size_t)rc) && !c.done))
			__builtin_trap();
	} else if (rc != 0 && rc != -400 && rc != -431 && rc != -505) {
		__builtin_trap();
	}
	return 0;
}
