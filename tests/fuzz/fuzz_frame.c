/* libFuzzer target: the frame decoder, fed a byte stream as a peer would
 * send it, then each JSON frame through the JSON object parser. */
#include <stddef.h>
#include <stdint.h>

#include "sbx_frame.h"
#include "sbx_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_err err;
	struct sbx_frame f;
	size_t off = 0;
	long n;

	while ((n = sbx_frame_decode(data + off, size - off, 64 * 1024, &f, &err)) > 0) {
		if (f.type == SBX_FRAME_JSON) {
			cJSON *o = sbx_json_parse_object(f.payload, f.len, &err);
			cJSON_Delete(o);
		}
		off += (size_t)n;
	}
	return 0;
}
