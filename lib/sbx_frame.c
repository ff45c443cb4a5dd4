#include "sbx_frame.h"

#include <errno.h>
#include <string.h>

void sbx_frame_header(unsigned char hdr[SBX_FRAME_HDR], enum sbx_frame_type t,
		      uint32_t len)
{
	hdr[0] = (unsigned char)(len >> 24);
	hdr[1] = (unsigned char)(len >> 16);
	hdr[2] = (unsigned char)(len >> 8);
	hdr[3] = (unsigned char)len;
	hdr[4] = (unsigned char)t;
}

int sbx_frame_append(struct sbx_buf *out, enum sbx_frame_type t,
		     const void *payload, size_t len)
{
	unsigned char *dst;

	if (len > SBX_FRAME_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	dst = sbx_buf_reserve(out, SBX_FRAME_HDR + len);
	if (!dst)
		return -1;
	sbx_frame_header(dst, t, (uint32_t)len);
	if (len)
		memcpy(dst + SBX_FRAME_HDR, payload, len);
	sbx_buf_commit(out, SBX_FRAME_HDR + len);
	return 0;
}

long sbx_frame_decode(const unsigned char *p, size_t n, uint32_t max,
		      struct sbx_frame *f, struct sbx_err *err)
{
	uint32_t len;

	if (!max || max > SBX_FRAME_MAX)
		max = SBX_FRAME_MAX;
	if (n < SBX_FRAME_HDR)
		return 0;
	len = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	      (uint32_t)p[2] << 8 | (uint32_t)p[3];
	if (p[4] > SBX_FRAME_TYPE_MAX)
		return sbx_err_set(err, EPROTO, "unknown frame type %u", p[4]);
	if (len > max)
		return sbx_err_set(err, EMSGSIZE,
				   "frame length %u over the maximum %u", len, max);
	if (p[4] == SBX_FRAME_EOF && len)
		return sbx_err_set(err, EPROTO, "eof frame with a payload");
	if (n - SBX_FRAME_HDR < len)
		return 0;
	f->type = (enum sbx_frame_type)p[4];
	f->payload = p + SBX_FRAME_HDR;
	f->len = len;
	return (long)(SBX_FRAME_HDR + len);
}
