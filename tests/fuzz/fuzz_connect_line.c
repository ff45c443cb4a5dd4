/* libFuzzer target: the hybrid-vsock handshake line the agent reads from
 * whoever connects (lib/sbx_hs.c). Checks, beyond memory safety: a result
 * never claims more bytes than given or than a line may have, a port is
 * always 1..65535, and what is accepted prints back to the same line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx_hs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int port = -1;
	long used = sbx_hs_parse_connect(data, size, &port);
	char again[SBX_HS_MAX + 8];

	if (used < -1 || used > (long)size || used > SBX_HS_MAX)
		__builtin_trap();
	if (used == 0 && (size >= SBX_HS_MAX || memchr(data, '\n', size)))
		__builtin_trap();   /* a complete or overlong line is decided */
	if (used > 0) {
		int n;
		if (port < 1 || port > 65535 || data[used - 1] != '\n')
			__builtin_trap();
		n = snprintf(again, sizeof again, "CONNECT %d", port);
		if (memcmp(again, data, (size_t)n))
			__builtin_trap();
	}
	return 0;
}
