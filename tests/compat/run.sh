#!/bin/bash
# Compat suite: the real @vercel/sandbox SDK (3.5.0, pinned in
# tests/compat/package.json) against the ASan gateway's /v2 and /v3 surface
# with a real runner and sandboxes, over HTTPS with a self-signed
# certificate (the SDK's domain() is https). Ends with "N passed, N failed".
. "$(dirname "$0")/../lib/harness.sh"

if [ -n "$(h_services_missing)" ]; then
	h_skip_suite "compat suite: $(h_services_missing)"
fi
[ -d tests/compat/node_modules/@vercel/sandbox ] || make node-deps >/dev/null || h_abort "npm packages"
h_begin compat-test
# the runner's image dir: the store's images (links) and room for the image
# pulled below (the store itself is never written)
STORE=$IMG IMG=$T/images
mkdir -p "$IMG"
for d in "$STORE"/*/; do ln -s "${d%/}" "$IMG/$(basename "$d")"; done

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=localhost" \
	-addext "subjectAltName=DNS:localhost,DNS:*.localhost,IP:127.0.0.1" \
	-keyout "$T/key.pem" -out "$T/cert.pem" >/dev/null 2>&1
export GW_KEY=compat-key-$RANDOM$RANDOM
SANDBOX_API_KEYS=$GW_KEY start_services "compat$$" --preview-domain localhost \
	--cert "$T/cert.pem" --key "$T/key.pem" || h_abort "gateway did not start"
export GW_URL=https://127.0.0.1:$GW_PORT GW_PREVIEW=https://127.0.0.1:$GW_PORT NODE_EXTRA_CA_CERTS=$T/cert.pem

# an image pushed to a docker-registry on loopback (tests/oci/mkimage.py):
# Sandbox.create({image}) with its reference
if command -v docker-registry >/dev/null && command -v skopeo >/dev/null &&
	file -L /bin/busybox 2>/dev/null | grep -q static; then
	start_registry
	rport=$REGISTRY_PORT
	python3 tests/oci/mkimage.py good "$T/app.tar" "from the SDK's image" &&
		mkdir -p "$T/layout" && tar -xf "$T/app.tar" -C "$T/layout" &&
		skopeo --insecure-policy copy -q --dest-tls-verify=false oci:"$T/layout" \
			"docker://127.0.0.1:$rport/sdk-app:1" >"$T/push.log" 2>&1 &&
		export COMPAT_IMAGE_REF=127.0.0.1:$rport/sdk-app:1
fi
node tests/compat/compat.test.mjs >"$T/out" 2>&1
[ -n "${COMPAT_KEEP_LOG:-}" ] && cp "$GW_LOG" "$COMPAT_KEEP_LOG"
cat "$T/out"
h_count -q "$T/out"
grep -qF "$GW_KEY" "$GW_LOG" && fail "the API key is in the gateway log"
stop_gateway_checked
h_finish
