"""docs/openapi.yaml as a C source of its compact JSON, built into the
gateway (GET /v1/openapi.json): the gateway has no YAML parser, and a
document inside the binary goes wherever the binary goes (make install,
deploy/), always the one of the code it describes.

Usage: openapi_c.py IN.yaml OUT.c      (Debian's python3-yaml)"""
import json
import os
import sys

try:
    import yaml
except ImportError:
    sys.exit("openapi_c.py: needs Debian's python3-yaml (make deps)")


def main(src, out):
    with open(src, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    if not isinstance(doc, dict) or "openapi" not in doc:
        sys.exit("%s: not an OpenAPI document" % src)
    data = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    rows = [", ".join("0x%02x" % b for b in data[i:i + 16]) for i in range(0, len(data), 16)]
    with open(out + ".tmp", "w", encoding="ascii") as f:
        f.write("/* Generated from %s by mk/openapi_c.py: do not edit. */\n" % src)
        f.write("#include <stddef.h>\n\n")
        f.write("const unsigned char gw_openapi_json[] = {\n\t%s\n};\n" % ",\n\t".join(rows))
        f.write("const size_t gw_openapi_json_len = %d;\n" % len(data))
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
