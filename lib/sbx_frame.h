/* The guest protocol's framing (docs/protocol.md): every frame is a 5-byte
 * header, a 32-bit big-endian payload length then a 1-byte type, followed by
 * the payload. Types 0..2 match the public stream tags (0 stdin, 1 stdout,
 * 2 stderr) so output can be relayed without translation. */
#ifndef SBX_FRAME_H
#define SBX_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "sbx_buf.h"
#include "sbx_err.h"

#define SBX_FRAME_HDR 5u
#define SBX_FRAME_MAX (1u << 20)   /* largest payload accepted or sent */

enum sbx_frame_type {
	SBX_FRAME_STDIN = 0,    /* bytes for a command's stdin / PTY input */
	SBX_FRAME_STDOUT = 1,   /* a command's stdout (or PTY output) */
	SBX_FRAME_STDERR = 2,   /* a command's stderr */
	SBX_FRAME_JSON = 3,     /* a control message: one JSON object */
	SBX_FRAME_DATA = 4,     /* file contents */
	SBX_FRAME_EOF = 5,      /* end of stdin or of file contents; empty */
	SBX_FRAME_TYPE_MAX = 5
};

/* Write the header for a frame of type t and payload length len to hdr. */
void sbx_frame_header(unsigned char hdr[SBX_FRAME_HDR], enum sbx_frame_type t,
		      uint32_t len);

/* Append a whole frame to out. Returns 0, or -1 (errno ENOBUFS/ENOMEM, or
 * EMSGSIZE when len exceeds SBX_FRAME_MAX). */
int sbx_frame_append(struct sbx_buf *out, enum sbx_frame_type t,
		     const void *payload, size_t len);

/* Incremental decoder over an input buffer. */
struct sbx_frame {
	enum sbx_frame_type type;
	const unsigned char *payload;   /* points into the input buffer */
	uint32_t len;
};

/* Try to decode one frame from the start of [p, p+n).
 * Returns the number of bytes the frame occupies (> 0) and fills f;
 * 0 when more bytes are needed; -1 with err set for a frame that can never be
 * valid (unknown type, length over max). max = 0 means SBX_FRAME_MAX. */
long sbx_frame_decode(const unsigned char *p, size_t n, uint32_t max,
		      struct sbx_frame *f, struct sbx_err *err);

#endif
