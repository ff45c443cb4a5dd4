#!/bin/bash
# Images across runners (runner/rn_image_pull_create.c, gateway/svc/
# svc_place.c): a docker-registry on loopback (the image built by
# tests/oci/mkimage.py, pushed with skopeo), two runners on this host's
# network (the registry's loopback is theirs too), each with an image
# store of its own that starts empty, behind one gateway. A create naming
# the registry reference is pulled by the runner it lands on before it
# answers; the next create of it goes to that runner although the other
# has more room; with that one drained the other pulls it as well.
# Sourced by tests/cluster/run.sh (defines cluster_images); run on its
# own: tests/cluster/images.sh.

im_code() { curl -s -m 180 -o "$T/im.body" -w '%{http_code}' "$@"; }
im_get() { python3 -c 'import json,sys;d=json.load(open(sys.argv[1]));print(eval("d"+sys.argv[2]))' "$T/im.body" "$1" 2>/dev/null; }
im_runner_of() { local s=${1#sbx_}; echo "${s%_*}"; }
# "name sandboxes images draining" of runner NAME as gateway PORT sees it
im_view() { # port name
	curl -s -m 10 -H "Authorization: Bearer $CL_METRICS_KEY" "http://127.0.0.1:$1/v1/runners" | python3 -c '
import json, sys
for r in json.load(sys.stdin)["runners"]:
    if r.get("name") == sys.argv[1]:
        print(r.get("name"), r.get("sandboxes"), r.get("images"), str(r.get("draining")).lower())' "$2" 2>/dev/null
}
im_wait_view() { # port name want (15 s at most: the gateway asks every second)
	for _ in $(seq 150); do [ "$(im_view "$1" "$2")" = "$3" ] && return 0; sleep 0.1; done
	return 1
}
im_create() { # port ref -> "STATUS ID"
	local c
	c=$(im_code -X POST -H "Authorization: Bearer $KEY" \
		-d "{\"image\":\"$2\",\"memory_mb\":256,\"timeout_ms\":600000}" "http://127.0.0.1:$1/v1/sandboxes")
	echo "$c $(im_get '["id"]')"
}
im_cat() { # port id path
	im_code -X POST -H "Authorization: Bearer $KEY" -d "{\"cmd\":\"cat\",\"args\":[\"$3\"]}" \
		"http://127.0.0.1:$1/v1/sandboxes/$2/commands" >/dev/null
	im_get '["stdout"]'
}
# the layer directories of a store, one a line
im_layers() { ls "$1/.layers/sha256" 2>/dev/null | sort; }
im_pulls() { grep -c "pulling it for a create" "$T/runner.$1.log"; }

cluster_images() {
	local rport ref ri rj st id x y id2 id3 c
	if ! command -v docker-registry >/dev/null || ! command -v skopeo >/dev/null; then
		skip "images: needs docker-registry and skopeo (mk/deps.sh)"
		return
	fi
	if ! file -L /bin/busybox 2>/dev/null | grep -q static; then
		skip "images: needs busybox-static (/bin/busybox) for the test image"
		return
	fi
	start_registry
	rport=$REGISTRY_PORT
	python3 tests/oci/mkimage.py good "$T/app.tar" "pulled by two runners" ||
		{ fail "images: tests/oci/mkimage.py could not build the image"; return; }
	mkdir -p "$T/app-layout" && tar -xf "$T/app.tar" -C "$T/app-layout"
	ref=127.0.0.1:$rport/app:1.2
	if ! skopeo --insecure-policy copy -q --dest-tls-verify=false oci:"$T/app-layout" \
		"docker://$ref" >"$T/push.log" 2>&1; then
		fail "images: skopeo could not push to the loopback registry ($(tail -2 "$T/push.log"))"
		return
	fi
	ri=${CL_TAG}i rj=${CL_TAG}j
	mkdir -p "$T/img-$ri" "$T/img-$rj"
	start_runner "$ri" "$T/ri.sock" "$T/si" --image-dir "$T/img-$ri" --max-memory-mb 4096 ||
		{ fail "images: runner $ri did not start"; return; }
	local pid_i=$RUNNER_PID
	start_runner "$rj" "$T/rj.sock" "$T/sj" --image-dir "$T/img-$rj" --max-memory-mb 4096 ||
		{ fail "images: runner $rj did not start"; return; }
	local pid_j=$RUNNER_PID
	cl_start_gw gimg "$GW" --runners "unix:$T/ri.sock,unix:$T/rj.sock" ||
		{ fail "images: the gateway did not start"; return; }
	local port=$CL_PORT gpid=$GW_PID
	im_wait_view "$port" "$ri" "$ri 0 0 false" && im_wait_view "$port" "$rj" "$rj 0 0 false" ||
		{ fail "images: the runners are not up with empty stores ($(im_view "$port" "$ri"); $(im_view "$port" "$rj"))"; return; }

	# the first create: the runner it lands on pulls the image, then answers
	read -r st id <<<"$(im_create "$port" "$ref")"
	check "images: a create naming a registry reference no runner has is 201" "$st" 201
	x=$(im_runner_of "$id")
	[ "$x" = "$ri" ] && y=$rj || y=$ri
	check "images: the sandbox reads the pulled image's file" "$(im_cat "$port" "$id" /app/hello.txt)" \
		"pulled by two runners"
	check "images: runner $x pulled it once, logging it; $y did not" "$(im_pulls "$x") $(im_pulls "$y")" "1 0"
	check "images: $x keeps it with its reference beside it; $y's store is empty" \
		"$(cat "$T"/img-"$x"/app-*/ref 2>/dev/null) $(ls "$T/img-$y" | wc -l)" "$ref 0"

	# the second: $x has less room now, yet it has the image
	im_wait_view "$port" "$x" "$x 1 2 false" ||
		fail "images: the gateway does not see $x with the sandbox and the image ($(im_view "$port" "$x"))"
	read -r st id2 <<<"$(im_create "$port" "$ref")"
	check "images: the next create of it goes to $x, which has it (not $y, which has more room)" \
		"$st $(im_runner_of "$id2")" "201 $x"
	check "images: no second pull on $x" "$(im_pulls "$x")" 1

	# $x drained: the create goes to $y, which pulls it from the same registry
	[ "$x" = "$ri" ] && kill -USR1 "$pid_i" || kill -USR1 "$pid_j"
	im_wait_view "$port" "$x" "$x 2 2 true" || fail "images: $x is not seen draining"
	read -r st id3 <<<"$(im_create "$port" "$ref")"
	check "images: with $x drained the create goes to $y, which pulls it first" \
		"$st $(im_runner_of "$id3") $(im_pulls "$y")" "201 $y 1"
	check "images: $y's sandbox reads the file" "$(im_cat "$port" "$id3" /app/hello.txt)" \
		"pulled by two runners"
	check "images: both stores hold the same layers" "$(im_layers "$T/img-$y" | md5sum)" \
		"$(im_layers "$T/img-$x" | md5sum)"

	# a reference the registry lacks: the pull's error, nothing kept
	c=$(im_code -X POST -H "Authorization: Bearer $KEY" -d "{\"image\":\"127.0.0.1:$rport/none:1\"}" \
		"http://127.0.0.1:$port/v1/sandboxes")
	check "images: a reference the registry lacks is 502 pull_failed" "$c $(im_get '["error"]["code"]')" \
		"502 pull_failed"
	check "images: ... and $y's store keeps only the one image" "$(ls "$T/img-$y" | grep -vc '^\.')" 1

	for s in "$id" "$id2" "$id3"; do
		curl -s -m 60 -o /dev/null -X DELETE -H "Authorization: Bearer $KEY" "http://127.0.0.1:$port/v1/sandboxes/$s"
	done
	kill "$gpid" 2>/dev/null; wait "$gpid" 2>/dev/null
	if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T/gw.gimg.log"; then
		fail "images: sanitizer report in the gateway's log"
	else
		pass "images: no sanitizer report in the gateway's log"
	fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	. "$(dirname "$0")/../lib/harness.sh"
	h_begin cluster-images
	[ -z "$(h_services_missing)" ] || h_skip_suite "cluster images: $(h_services_missing)"
	. tests/cluster/lib.sh
	cl_init || h_abort "cl_init failed"
	suite_cleanup() { cl_teardown; }
	KEY=key-cluster-img-$$
	cluster_images
	h_finish
fi
