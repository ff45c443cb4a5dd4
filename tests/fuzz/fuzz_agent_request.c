/* libFuzzer target: the agent's request parser (guest/agent_req.c) on the
 * payload of a connection's first frame. */
#include <stddef.h>
#include <stdint.h>

#include "agent_req.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ag_req r;
	struct sbx_err err;

	if (ag_req_parse(data, size, &r, &err) == 0)
		ag_req_free(&r);
	return 0;
}
