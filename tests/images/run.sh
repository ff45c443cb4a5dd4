#!/bin/bash
# Images suite: the runtime images (mk/runtime-images.sh) and the image
# operations through the real gateway and runner.
#  - GET /v1/images: each image's digest and size; a digest is the same in
#    two listings, differs between images, and a copy of a tree has the
#    tree's digest;
#  - each runtime image's node, npm and corepack, run in a sandbox under
#    every isolation the runner offers (jail, gvisor), are the versions the
#    listing read from the image, and node's major is the image's;
#  - the default image's python3 is the one the listing names;
#  - an image rebuilt under a running sandbox (a new tree renamed into
#    place, as mk/image.sh does) leaves the sandbox on the tree it started
#    from;
#  - DELETE /v1/images/{name}: 409 while a sandbox uses it or a snapshot
#    of one is kept, 204 once they are gone (its tree then goes from the disk), 404 unknown, 409 for the
#    default; the runner's other images unchanged.
# The runner gets an image dir of the suite's own ($T/images): links to the
# store's images, and "scratch", a hard-link copy of the default that the
# suite rebuilds and deletes (the store itself is never written).
. "$(dirname "$0")/../lib/harness.sh"
. tests/images/vite.sh
h_begin images-test

why=$(h_services_missing)
[ -z "$why" ] && [ ! -x "$GW" ] && why="$GW not built (make)"
[ -z "$why" ] || h_skip_suite "$why"
for n in node22 node24 node26; do
	[ -f "$IMG/$n/rootfs/.sandbox-image" ] || h_skip_suite "no runtime image $n in $IMG (make image)"
done

STORE=$IMG
IMG=$T/images
mkdir -p "$IMG/scratch"
for n in default node22 node24 node26; do ln -s "$STORE/$n" "$IMG/$n"; done
cp -al "$STORE/default/rootfs" "$IMG/scratch/rootfs.new" 2>/dev/null ||
	h_skip_suite "cannot hard-link $STORE into $T (another filesystem)"
# a file of scratch's own (not a link into the store): what the rebuild changes
rm -f "$IMG/scratch/rootfs.new/etc/scratch-build"
echo one >"$IMG/scratch/rootfs.new/etc/scratch-build"
mv "$IMG/scratch/rootfs.new" "$IMG/scratch/rootfs"
# a second one, for sbx images rm
mkdir -p "$IMG/scratch2" && cp -al "$STORE/default/rootfs" "$IMG/scratch2/rootfs"

SANDBOX_API_KEYS=key-one start_services "images$$" || h_abort "services did not start"
A='Authorization: Bearer key-one'
u=$GW_URL/v1

code() { curl -s -m 120 -o "$T/body" -w '%{http_code}' "$@"; }
jq_py() { # expression on the JSON of file $1 as d
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null
}
create() { # image isolation: the new sandbox's id, or "" (body in $T/body)
	code -H "$A" -d "{\"image\":\"$1\",\"isolation\":\"$2\",\"timeout_ms\":300000}" "$u/sandboxes" >/dev/null
	jq_py "$T/body" 'd.get("id","")'
}
run() { # id shell-command: its stdout
	curl -s -m 120 -H "$A" -d "$(python3 -c 'import json,sys;print(json.dumps({"cmd":"sh","args":["-c",sys.argv[1]]}))' "$2")" \
		"$u/sandboxes/$1/commands" | python3 -c 'import json,sys;print(json.load(sys.stdin)["stdout"],end="")' 2>/dev/null
}
stop() { curl -s -m 60 -o /dev/null -H "$A" -X DELETE "$u/sandboxes/$1"; }

# ---- listing: digests and sizes ----
check "images: GET 200" "$(code -H "$A" "$u/images")" 200
cp "$T/body" "$T/list1.json"
code -H "$A" "$u/images" >/dev/null
cp "$T/body" "$T/list2.json"
digests() { jq_py "$1" '" ".join("%s=%s" % (i["name"], i.get("digest")) for i in d["images"])'; }
check "images: the suite's image dir, by name" "$(jq_py "$T/list1.json" '" ".join(i["name"] for i in d["images"])')" \
	"default node22 node24 node26 scratch scratch2"
check "images: every image has a sha256 digest and a size" \
	"$(jq_py "$T/list1.json" 'all(len(i.get("digest",""))==71 and i["digest"].startswith("sha256:") and i.get("size",0)>0 for i in d["images"])')" True
check "images: the digests are the same in two listings" "$(digests "$T/list2.json")" "$(digests "$T/list1.json")"
check "images: default, node22, node24 and node26 have four different digests" \
	"$(jq_py "$T/list1.json" 'len(set(i["digest"] for i in d["images"] if not i["name"].startswith("scratch")))')" 4
check "images: a hard-link copy of the default has the default's digest (the tree's, not the name's)" \
	"$(jq_py "$T/list1.json" 'len(set(i["digest"] for i in d["images"] if i["name"] in ("scratch","default")))')" 1
rt() { jq_py "$T/list1.json" "[i for i in d['images'] if i['name']=='$1'][0]['runtimes'].get('$2','')"; }

# ---- the runtimes, in a sandbox, under each isolation ----
code -H "$A" "$u/capabilities" >/dev/null
isolations=$(jq_py "$T/body" '" ".join(i["name"] for i in d["isolation"] if i["available"])')
for iso in jail gvisor; do
	case " $isolations " in
	*" $iso "*) ;;
	*) skip "runtimes under $iso: not available on this runner"; continue ;;
	esac
	for n in node22 node24 node26; do
		id=$(create "$n" "$iso")
		[ -n "$id" ] || { fail "runtimes: $n under $iso: create: $(head -c 300 "$T/body")"; continue; }
		want="v$(rt $n node) $(rt $n npm) $(rt $n corepack)"
		check "runtimes: $n under $iso: node, npm and corepack are the listing's ($want)" \
			"$(run "$id" 'echo $(node --version) $(npm --version) $(COREPACK_ENABLE_DOWNLOAD_PROMPT=0 corepack --version)')" "$want"
		check "runtimes: $n under $iso: node's major is the image's" "$(rt $n node | cut -d. -f1)" "${n#node}"
		check "runtimes: $n under $iso: /usr/bin/node is that node too" "$(run "$id" '/usr/bin/node --version')" "v$(rt $n node)"
		stop "$id"
	done
	id=$(create default "$iso")
	check "runtimes: default under $iso: python3 is the listing's, node Debian's" \
		"$(run "$id" 'python3 --version; node --version')" "Python $(rt default python)
v$(rt default node)"
	stop "$id"
done

# ---- a rebuild under a running sandbox ----
old=$(create scratch jail)
[ -n "$old" ] || fail "rebuild: create from scratch: $(head -c 300 "$T/body")"
cp -al "$STORE/default/rootfs" "$IMG/scratch/rootfs.build"
rm -f "$IMG/scratch/rootfs.build/etc/scratch-build"
echo two >"$IMG/scratch/rootfs.build/etc/scratch-build"
mkdir "$IMG/scratch/rootfs.old" && mv "$IMG/scratch/rootfs" "$IMG/scratch/rootfs.old/rootfs"
mv "$IMG/scratch/rootfs.build" "$IMG/scratch/rootfs"
new=$(create scratch jail)
check "rebuild: the sandbox started before keeps its tree; one started after gets the new one" \
	"$(run "$old" 'cat /etc/scratch-build') $(run "$new" 'cat /etc/scratch-build')" "one two"
stop "$new"

# ---- DELETE ----
check "delete: without a key 401" "$(code -X DELETE "$u/images/scratch")" 401
check "delete: '..' never names an image (404), a dot-name is 422 invalid, the image dir is unchanged" \
	"$(code --path-as-is -H "$A" -X DELETE "$u/images/..") $(code -H "$A" -X DELETE "$u/images/.deleting-scratch") $(jq_py "$T/body" 'd["error"]["code"]') $(ls -A "$IMG" | tr '\n' ' ')" \
	"404 422 invalid default node22 node24 node26 scratch scratch2 "
check "delete: while a sandbox uses it 409 conflict, naming the sandbox" \
	"$(code -H "$A" -X DELETE "$u/images/scratch") $(jq_py "$T/body" 'd["error"]["code"]') $(grep -c "$old" "$T/body")" \
	"409 conflict 1"
check "delete: the refused image is still listed and still starts sandboxes" \
	"$(curl -s -m 20 -H "$A" "$u/images" | grep -c '"scratch"') $(run "$old" 'echo up')" "1 up"
# a snapshot of a sandbox of the image stacks on it: the image stays while the snapshot does
code -H "$A" -d '{}' "$u/sandboxes/$old/snapshots" >/dev/null
snap=$(jq_py "$T/body" 'd.get("id","")')
stop "$old"
if [ -n "$snap" ]; then
	check "delete: its sandbox stopped, a snapshot of it is left: 409 conflict naming the snapshot" \
		"$(code -H "$A" -X DELETE "$u/images/scratch") $(jq_py "$T/body" 'd["error"]["code"]') $(grep -c "$snap" "$T/body")" \
		"409 conflict 1"
	curl -s -m 60 -o /dev/null -H "$A" -X DELETE "$u/snapshots/$snap"
else
	fail "delete: a snapshot of the scratch sandbox: $(head -c 300 "$T/body")"
fi
check "delete: once its sandboxes stopped 204" "$(code -H "$A" -X DELETE "$u/images/scratch")" 204
check "delete: gone from the listing" \
	"$(curl -s -m 20 -H "$A" "$u/images" | python3 -c 'import json,sys;print(" ".join(i["name"] for i in json.load(sys.stdin)["images"]))')" \
	"default node22 node24 node26 scratch2"
out=$(SBX_URL=$GW_URL SBX_API_KEY=key-one bin/sbx images rm scratch2 2>&1)
check "delete: sbx images rm scratch2 exits 0 and says nothing" "$?:$out" "0:"
check "delete: a create from it is now 422 naming the images there are" \
	"$(code -H "$A" -d '{"image":"scratch"}' "$u/sandboxes") $(grep -c 'default, node22, node24, node26' "$T/body")" "422 1"
gone=0
for _ in $(seq 600); do   # two trees of the default's ~30000 files, on a loaded disk
	[ -z "$(ls -A "$IMG" | grep -v -e '^default$' -e '^node2[246]$')" ] && { gone=1; break; }
	sleep 0.5
done
check "delete: its tree is removed from the image dir (the renamed-aside copy too)" "$gone" 1
check "delete: the store's default is untouched (stamp and digest)" \
	"$(sed -n 's/^digest=//p' "$STORE/default/rootfs/.sandbox-image")" \
	"$(jq_py "$T/list1.json" "[i for i in d['images'] if i['name']=='default'][0]['digest']")"
check "delete: again 404 not_found" "$(code -H "$A" -X DELETE "$u/images/scratch") $(jq_py "$T/body" 'd["error"]["code"]')" "404 not_found"
check "delete: an unknown name 404" "$(code -H "$A" -X DELETE "$u/images/python3.13")" 404
check "delete: a path is no name (404)" "$(code --path-as-is -H "$A" -X DELETE "$u/images/..%2Fdefault")" 404
check "delete: the default image 409 (a create without an image starts from it)" \
	"$(code -H "$A" -X DELETE "$u/images/default") $(jq_py "$T/body" 'd["error"]["code"]')" "409 conflict"

# ---- a generated Vite app: offline install, dev server, HMR through the preview ----
images_vite "$GW_URL" key-one

stop_gateway_checked
h_finish
