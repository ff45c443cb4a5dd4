/* libFuzzer target: a runner control request (one JSON object) through the
 * create-request parser (runner/rn_spec.c), as an untrusted client sends it. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../runner/rn_spec.h"
#include "sbx_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_err err;
	struct rn_spec spec;
	cJSON *o = sbx_json_parse_object(data, size, &err);

	if (!o)
		return 0;
	if (rn_spec_parse(o, &spec, &err) == 0) {
		/* a parsed spec is within its bounds, and names an image: a
		 * name, or a checked registry reference (resolved to a name
		 * only when the runner has pulled it) */
		if (spec.memory_mb < 32 || spec.n_ports > RN_MAX_PORTS || spec.n_env > RN_MAX_ENV ||
		    (spec.image[0] == 0) == (spec.image_ref[0] == 0) ||
		    (spec.image_ref[0] && !rn_image_ref_ok(spec.image_ref)))
			__builtin_trap();
		rn_spec_free(&spec);
	}
	cJSON_Delete(o);
	return 0;
}
