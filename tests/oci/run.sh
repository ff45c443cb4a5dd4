#!/bin/bash
# OCI images brought by the user (docs/api.md, POST /v1/images): images
# built here by hand (tests/oci/mkimage.py: busybox-static plus a file,
# Env and WorkingDir in the config), imported over REST into the suite's
# own image store (never /var/cache/sandbox), run under jail (and gvisor
# when this runner offers it); the hostile-layer corpus refused with the
# store and the host unchanged; layers shared; a pull from a
# docker-registry on loopback; the store cap (507) and the size cap (413);
# an import in progress does not hold up a create. Needs root.
. "$(dirname "$0")/../lib/harness.sh"
h_begin oci
MK="python3 tests/oci/mkimage.py"
[ "$(id -u)" = 0 ] || h_skip_suite "oci: needs root (the runner maps uid ranges)"
[ -x "$RUNNER" ] || h_skip_suite "oci: $RUNNER not built (make)"
[ -x /bin/busybox ] && file -L /bin/busybox | grep -q static ||
	h_skip_suite "oci: needs busybox-static (/bin/busybox)"
IMG=$T/images
mkdir -p "$IMG" "$T/escape"
KEY=k-oci
export SANDBOX_API_KEYS=$KEY
start_runner "oci$$" "$T/runner.sock" "$T/state" --image-max-mb 16 ||
	h_abort "oci: the runner did not start"
GW_PORT=$(random_port)
GW_LOG=$T/gateway.log
start_gateway "$GW" "$GW_PORT" "$GW_LOG" --runner-socket "$T/runner.sock" ||
	h_abort "oci: the gateway did not start"
GW_URL=http://127.0.0.1:$GW_PORT
A="Authorization: Bearer $KEY"

api() { # method path [curl args...]: body then " STATUS" on one line
	local m=$1 p=$2; shift 2
	curl -s -m 120 -X "$m" -H "$A" -w ' %{http_code}' "$@" "$GW_URL$p"
}
status() { echo "${1##* }"; }
field() { # json-with-status key
	python3 -c 'import json,sys; print(json.loads(sys.argv[1].rsplit(" ",1)[0]).get(sys.argv[2]))' "$1" "$2" 2>/dev/null
}
listing() { (cd "$IMG" && find . -printf '%p %y %m %s\n' | sort | md5sum); }
create() { # image [isolation]
	local body="{\"image\":\"$1\"${2:+,\"isolation\":\"$2\"}}"
	field "$(api POST /v1/sandboxes -d "$body")" id
}
run() { # sid json-exec-body -> stdout
	local out
	out=$(api POST "/v1/sandboxes/$1/commands" -d "$2")
	python3 -c 'import json,sys; o=json.loads(sys.argv[1].rsplit(" ",1)[0]); print(repr(o.get("stdout","")) + " exit=" + str(o.get("exit_code")))' "$out" 2>/dev/null || echo "$out"
}

$MK good "$T/good.tar" || h_abort "oci: cannot build the test image"

# --- import over REST, run under each isolation ----------------------------
r=$(api POST "/v1/images?name=app" --data-binary @"$T/good.tar")
check "import: an OCI layout tar over REST is 201" "$(status "$r")" 201
check "import: two layers, both new" "$(field "$r" layers)/$(field "$r" layers_new)" 2/2
r=$(api GET /v1/images)
echo "$r" | grep -q '"name":"app"' && pass "GET /v1/images lists the imported image" ||
	fail "GET /v1/images lists the imported image ($r)"
[ -f "$IMG/app/rootfs/bin/busybox" ] && [ ! -e "$IMG/default" ] &&
	pass "the image is in the suite's own store, which has no default image" ||
	fail "the image is in the suite's own store"

isolations=jail
caps=$(api GET /v1/capabilities)
if echo "$caps" | python3 -c 'import json,sys; o=json.loads(sys.stdin.read().rsplit(" ",1)[0]); sys.exit(0 if any(d.get("name")=="gvisor" and d.get("available") for d in o.get("isolation",o.get("drivers",[]))) else 1)' 2>/dev/null; then
	isolations="jail gvisor"
else
	skip "gvisor: not available on this runner (jail only)"
fi
# a VM (its own kernel, the image as its erofs root disk) when this host has one
if echo "$caps" | python3 -c 'import json,sys; o=json.loads(sys.stdin.read().rsplit(" ",1)[0]); sys.exit(0 if any(d.get("name")=="vm" and d.get("available") for d in o.get("isolation",[])) else 1)' 2>/dev/null; then
	isolations="$isolations vm"
else
	skip "vm: not available on this runner"
fi
for iso in $isolations; do
	r=$(api POST /v1/sandboxes -d "{\"image\":\"app\",\"isolation\":\"$iso\"}")
	sid=$(field "$r" id)
	if [ -z "$sid" ] || [ "$sid" = None ]; then
		fail "$iso: a sandbox from the imported image starts ($(echo "$r" | head -c 400))"; continue
	fi
	pass "$iso: a sandbox from the imported image starts"
	check "$iso: WorkingDir is the cwd, Env is set, the image's file is there" \
		"$(run "$sid" '{"cmd":"sh","args":["-c","pwd; echo $GREETING; cat hello.txt"],"wait":true}')" \
		"'/app\\nhello from the image\\nhello oci\\n' exit=0"
	check "$iso: a command's own env wins over the image's Env" \
		"$(run "$sid" '{"cmd":"sh","args":["-c","echo $GREETING"],"env":{"GREETING":"mine"},"wait":true}')" \
		"'mine\\n' exit=0"
	check "$iso: the file reads back through the files API" \
		"$(curl -s -H "$A" "$GW_URL/v1/sandboxes/$sid/files?path=/app/hello.txt")" "hello oci"
	api DELETE "/v1/sandboxes/$sid" >/dev/null
done

# an image without /bin/sh: commands are exec'd, never through a shell
$MK nosh "$T/nosh.tar"
r=$(api POST "/v1/images?name=nosh" --data-binary @"$T/nosh.tar")
check "import: an image without /bin/sh" "$(status "$r")" 201
sid=$(create nosh)
check "an image without /bin/sh runs a command by exec" \
	"$(run "$sid" '{"cmd":"cat","args":["hello.txt"],"wait":true}')" "'no shell here\\n' exit=0"
api DELETE "/v1/sandboxes/$sid" >/dev/null

# --- layers shared, whiteouts, setuid --------------------------------------
$MK docker "$T/docker.tar"
r=$(api POST "/v1/images?name=dock" --data-binary @"$T/docker.tar")
check "import: a docker-archive, its base layer already stored (1 new of 2)" \
	"$(status "$r") $(field "$r" layers_new)/$(field "$r" layers)" "201 1/2"
check "two images sharing a base layer: one inode for its file in both rootfs" \
	"$(stat -c %i "$IMG/app/rootfs/bin/busybox")" "$(stat -c %i "$IMG/dock/rootfs/bin/busybox")"
base=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["layers"][0][7:])' "$IMG/app/config.json")
check "... and that inode is the layer store's" \
	"$(stat -c %i "$IMG/.layers/sha256/$base/bin/busybox")" "$(stat -c %i "$IMG/app/rootfs/bin/busybox")"
$MK whiteouts "$T/wh.tar"
r=$(api POST "/v1/images?name=wh" --data-binary @"$T/wh.tar")
check "import: four layers with whiteouts" "$(status "$r") $(field "$r" setuid_stripped)" "201 1"
check "a whiteout removes a lower layer's file; an opaque dir hides the lower's" \
	"$(cd "$IMG/wh/rootfs" && ls app etc | tr '\n' ' ')" "app: suid  etc: only "
check "setuid bits are stripped" "$(stat -c %a "$IMG/wh/rootfs/app/suid")" 755
r=$(api POST "/v1/images?name=app" --data-binary @"$T/good.tar")
check "import: a name that exists is 409" "$(status "$r")" 409
# digests (sha256 of the imported image's config.json: its layers' diff_ids
# and config), and a delete: the layers another image shares stay
digest() { api GET /v1/images | python3 -c 'import json,sys; print({i["name"]:i.get("digest","") for i in json.loads(sys.stdin.read().rsplit(" ",1)[0])["images"]}.get(sys.argv[1], ""))' "$1"; }
d_app=$(digest app)
r=$(api POST "/v1/images?name=app2" --data-binary @"$T/good.tar")
check "digest: an imported image has one; the same archive under another name has the same; another image another" \
	"$(echo "$d_app" | grep -cE '^sha256:[0-9a-f]{64}$') $([ "$(digest app2)" = "$d_app" ] && echo same) $([ "$(digest wh)" != "$d_app" ] && echo other)" \
	"1 same other"
check "delete: DELETE /v1/images/app2 is 204" "$(status "$(api DELETE /v1/images/app2)")" 204
check "delete: app2 is gone, app (same layers) is listed with its digest and still runs" \
	"$(digest app2)|$(digest app)|$(run "$(create app)" '{"cmd":"cat","args":["hello.txt"],"wait":true}')" \
	"|$d_app|'hello oci\\n' exit=0"
for _ in $(seq 600); do   # its tree goes in the background: gone before the listings below
	ls -A "$IMG" | grep -q '^\.deleting-' || break
	sleep 0.1
done

# garbage collection (runner/rn_oci_gc.c): the layer only a deleted image
# used goes from the store; the base it shared with app stays
$MK good "$T/gc.tar" "only gc has this layer"
r=$(api POST "/v1/images?name=gc" --data-binary @"$T/gc.tar")
check "gc: an image with app's base and a layer of its own (1 new of 2)" \
	"$(status "$r") $(field "$r" layers_new)/$(field "$r" layers)" "201 1/2"
own=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["layers"][1][7:])' "$IMG/gc/config.json")
[ -n "$own" ] && [ -d "$IMG/.layers/sha256/$own" ] && pass "gc: its own layer is in the layer store" ||
	fail "gc: its own layer is in the layer store ($own)"
check "gc: DELETE /v1/images/gc is 204" "$(status "$(api DELETE /v1/images/gc)")" 204
for _ in $(seq 600); do [ -d "$IMG/.layers/sha256/$own" ] || break; sleep 0.1; done
check "gc: its own layer's directory is gone; the shared base's is there; app still runs" \
	"$([ -e "$IMG/.layers/sha256/$own" ] && echo there || echo gone) $([ -d "$IMG/.layers/sha256/$base" ] && echo kept) $(run "$(create app)" '{"cmd":"cat","args":["hello.txt"],"wait":true}')" \
	"gone kept 'hello oci\\n' exit=0"
check "gc: the layer store holds exactly the layers the images name" \
	"$(ls "$IMG/.layers/sha256" | sort | tr '\n' ' ')" \
	"$(python3 -c 'import json,sys; print(" ".join(sorted({l[7:] for f in sys.argv[1:] for l in json.load(open(f))["layers"]})) + " ")' "$IMG"/*/config.json)"

# --- the hostile corpus: refused, store and host unchanged -------------------
before=$(listing)
for c in $($MK cases); do
	$MK hostile "$c" "$T/h-$c.tar" "$T/escape"
	r=$(api POST "/v1/images?name=h-$c" --data-binary @"$T/h-$c.tar")
	case $c in bomb|bomb-many) want=413 ;; *) want=422 ;; esac
	check "hostile $c: refused ($want)" "$(status "$r")" $want
done
check "hostile corpus: the store's listing is unchanged" "$(listing)" "$before"
check "hostile corpus: nothing written outside the store" "$(ls -A "$T/escape" | wc -l)" 0
[ -z "$(ls -A "$IMG/.tmp")" ] && pass "hostile corpus: no staging left behind" ||
	fail "hostile corpus: staging left behind ($(ls -A "$IMG/.tmp"))"

# --- an import in progress does not hold up a create --------------------------
mkfifo "$T/slow"
api POST "/v1/images?name=slow" -H 'Expect:' -H "Content-Length: $(stat -c %s "$T/good.tar")" \
	--data-binary @"$T/slow" >"$T/slow.out" &
slow=$!
exec 9>"$T/slow"
head -c 65536 "$T/good.tar" >&9
sid=$(create app)
check "a create and a command while an upload is half sent" \
	"$(run "$sid" '{"cmd":"cat","args":["hello.txt"],"wait":true}')" "'hello oci\\n' exit=0"
kill -0 $slow 2>/dev/null && pass "... and the upload was still open meanwhile" ||
	fail "... and the upload was still open meanwhile"
tail -c +65537 "$T/good.tar" >&9
exec 9>&-
wait $slow
check "the slow upload then completes" "$(status "$(cat "$T/slow.out")")" 201
api DELETE "/v1/sandboxes/$sid" >/dev/null

# --- pull from a registry on loopback -----------------------------------------
if command -v docker-registry >/dev/null && command -v skopeo >/dev/null; then
	start_registry
	rport=$REGISTRY_PORT
	mkdir -p "$T/layout" && tar -xf "$T/good.tar" -C "$T/layout"
	$MK good "$T/good2.tar" "pulled through the registry"
	mkdir -p "$T/layout2" && tar -xf "$T/good2.tar" -C "$T/layout2"
	if skopeo --insecure-policy copy -q --dest-tls-verify=false oci:"$T/layout2" \
		"docker://127.0.0.1:$rport/app:1.2" >"$T/push.log" 2>&1; then
		r=$(api POST /v1/images -H 'Content-Type: application/json' \
			-d "{\"ref\":\"127.0.0.1:$rport/app:1.2\",\"name\":\"pulled\"}")
		check "pull: a registry reference is 201; its base layer was stored (1 new)" \
			"$(status "$r") $(field "$r" layers_new)" "201 1"
		sid=$(create pulled)
		check "pull: a sandbox from the pulled image reads its file" \
			"$(run "$sid" '{"cmd":"cat","args":["hello.txt"],"wait":true}')" \
			"'pulled through the registry' exit=0"
		api DELETE "/v1/sandboxes/$sid" >/dev/null
		r=$(api POST /v1/images -H 'Content-Type: application/json' \
			-d "{\"ref\":\"127.0.0.1:$rport/none:1\",\"name\":\"none\"}")
		check "pull: an unknown reference is 502 pull_failed" \
			"$(status "$r") $(field "$r" error | grep -o pull_failed)" "502 pull_failed"
	else
		fail "pull: skopeo could not push to the loopback registry ($(tail -2 "$T/push.log"))"
	fi
else
	skip "pull: needs skopeo and docker-registry (mk/deps.sh)"
fi

# --- the store cap: 507 -----------------------------------------------------------
mkdir -p "$T/small"
start_runner "ocs$$" "$T/small.sock" "$T/small-state" --image-dir "$T/small" --image-store-mb 3 ||
	h_abort "oci: the capped runner did not start"
port2=$(random_port)
start_gateway "$GW" "$port2" "$T/gw2.log" --runner-socket "$T/small.sock" ||
	h_abort "oci: the second gateway did not start"
r=$(curl -s -m 120 -H "$A" -w ' %{http_code}' --data-binary @"$T/good.tar" \
	"http://127.0.0.1:$port2/v1/images?name=first")
check "store cap: an import within --image-store-mb (3 MiB) is 201" "$(status "$r")" 201
before=$(cd "$T/small" && find . -printf '%p %s\n' | sort | md5sum)
r=$(curl -s -m 120 -H "$A" -w ' %{http_code}' --data-binary @"$T/nosh.tar" \
	"http://127.0.0.1:$port2/v1/images?name=second")
check "store cap: one past it is 507 insufficient_storage" \
	"$(status "$r") $(echo "$r" | grep -o insufficient_storage)" "507 insufficient_storage"
check "store cap: the store is unchanged by the refused import" \
	"$(cd "$T/small" && find . -printf '%p %s\n' | sort | md5sum)" "$before"

stop_gateway_checked
h_finish
