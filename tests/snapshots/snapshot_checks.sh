# Snapshots, create from a snapshot, forks, deletes, another key, the
# depth cap, keep_last, sparse files and expiry (docs/api.md "Snapshots"),
# sourced by run.sh with its services and helpers (api, j, run, create) in
# the pass of each isolation: create makes sandboxes of $ISO. Leaves SRC,
# a running sandbox with notes.txt "after", for what follows.

# ---- a sandbox with files and an npm package made here ----
SRC=$(create "{\"timeout_ms\":600000,\"ports\":[3000],\"memory_mb\":256,\"env\":{\"TOKEN\":\"$SECRET\"}}")
[ -n "$SRC" ] || h_abort "create: $(cat "$T/body")"
run "$SRC" 'mkdir -p pkg/package app && cd pkg/package &&
	printf "{\"name\":\"snaptest-pkg\",\"version\":\"1.0.0\",\"main\":\"index.js\"}" >package.json &&
	echo "module.exports = 41 + 1;" >index.js && cd .. && tar czf snaptest-pkg-1.0.0.tgz package' >/dev/null
check "npm: the package made by the test installs offline" \
	"$(run "$SRC" 'cd app && npm install --offline --no-audit --no-fund ../pkg/snaptest-pkg-1.0.0.tgz >/dev/null 2>&1; node -e "console.log(require(\"snaptest-pkg\"))"')" 42
run "$SRC" 'echo before > notes.txt; echo gone > doomed.txt' >/dev/null

check "snapshot: 201" "$(api POST "/sandboxes/$SRC/snapshots" '{"expires_in_ms":3600000}')" 201
SNP=$(j 'o["id"]')
check "snapshot: the object (id, sandbox_id, image, size > 0, expires_at after created_at)" \
	"$(j '(o["id"].startswith("snp_'$RN'_"), o["sandbox_id"], o["image"], o["size"] > 0, o["expires_at"] - o["created_at"])')" \
	"(True, '$SRC', 'default', True, 3600000)"
check "snapshot: its layer and meta.json on the runner's disk" \
	"$(ls "$SNAPS/$SNP" 2>/dev/null | tr '\n' ' ')" "layer meta.json "
check "snapshot: env values are in no snapshot metadata" "$(grep -rl "$SECRET" "$SNAPS"/*/meta.json | wc -l)" 0
check "snapshot: no owner tag shown" "$(grep -c owner "$T/body")" 0

run "$SRC" 'echo after > notes.txt; rm doomed.txt; echo leak > later.txt' >/dev/null
NEW=$(create "{\"source\":{\"snapshot\":\"$SNP\"},\"timeout_ms\":600000}")
check "from snapshot: created under $ISO, source named" \
	"$(j 'o["status"], o["isolation"], o["source"]["snapshot"]')" "running $ISO $SNP"
check "from snapshot: the npm package is there" \
	"$(run "$NEW" 'cd app && node -e "console.log(require(\"snaptest-pkg\"))"')" 42
check "from snapshot: files as at the snapshot, the source's later writes not there" \
	"$(run "$NEW" 'cat notes.txt doomed.txt; ls later.txt 2>&1 | grep -c "No such"')" "before
gone
1"
check "from snapshot: files owned by the sandbox user" "$(run "$NEW" 'stat -c %U notes.txt app/node_modules/snaptest-pkg/index.js | sort -u')" sandbox
check "from snapshot: without the source's env" "$(run "$NEW" 'echo "[$TOKEN]"')" "[]"
run "$NEW" 'echo mine > notes.txt' >/dev/null
check "from snapshot: its own writes stay its own" "$(run "$SRC" 'cat notes.txt')" after

# ---- a chain: a snapshot of a sandbox made from a snapshot ----
api POST "/sandboxes/$NEW/snapshots" '{}' >/dev/null
SNP2=$(j 'o["id"]')
check "chain: depth 2, parent named" "$(j 'o["depth"], o["parent"]')" "2 $SNP"
NEW2=$(create "{\"source\":{\"snapshot\":\"$SNP2\"}}")
check "chain: both layers show" "$(run "$NEW2" 'cat notes.txt; cd app && node -e "console.log(require(\"snaptest-pkg\"))"')" "mine
42"

# ---- fork x3 ----
check "fork: 201" "$(api POST "/sandboxes/$SRC/fork" '{"count":3}')" 201
FORKS=$(j '" ".join(s["id"] for s in o["sandboxes"])')
check "fork: three sandboxes with the source's settings, without its env" \
	"$(j '[(s["ports"], s["memory_mb"], s["env_names"], s["source"]["snapshot"] == o["snapshot"]["id"]) for s in o["sandboxes"]]')" \
	"[([3000], 256, [], True), ([3000], 256, [], True), ([3000], 256, [], True)]"
for f in $FORKS; do run "$f" "echo $f > who.txt" >/dev/null; done
got=
for f in $FORKS; do got="$got$(run "$f" 'cat who.txt notes.txt | tr "\n" " "')|"; done
want=
for f in $FORKS; do want="$want$f after |"; done
check "fork: each diverges on its own (its own file, the source's state at the fork)" "$got" "$want"
check "fork: the source sees none of them" "$(run "$SRC" 'ls who.txt 2>&1 | grep -c "No such"')" 1
check "fork: count over the limit is refused 422" "$(api POST "/sandboxes/$SRC/fork" '{"count":11}')" 422
for f in $FORKS; do api DELETE "/sandboxes/$f" >/dev/null; done

# ---- another key ----
check "other key: not in its list" "$(api GET /snapshots '' "$B"; j 'len(o["snapshots"])')" "2000"
check "other key: get 404" "$(api GET "/snapshots/$SNP" '' "$B")" 404
check "other key: create from it 404" "$(api POST /sandboxes "{\"source\":{\"snapshot\":\"$SNP\"}}" "$B")" 404
check "other key: delete 404" "$(api DELETE "/snapshots/$SNP" '' "$B")" 404
check "other key: snapshot of another's sandbox 404" "$(api POST "/sandboxes/$SRC/snapshots" '{}' "$B")" 404
check "other key: fork of another's sandbox 404" "$(api POST "/sandboxes/$SRC/fork" '{"count":1}' "$B")" 404
check "other key: pause of another's sandbox 404" "$(api POST "/sandboxes/$SRC/pause" '' "$B")" 404
check "other key: the snapshot is still there for its owner" "$(api GET "/snapshots/$SNP")" 200
check "unknown snapshot 404" "$(api GET /snapshots/snp_${RN}_aaaaaaaaaaaaaaaaaaaaaaaa)" 404
check "a source that is not a snapshot: 422" "$(api POST /sandboxes '{"source":{"image":"x"}}')" 422

# ---- delete while a sandbox runs from it: gone from the API, layer kept until it ends ----
check "delete in use: 200" "$(api DELETE "/snapshots/$SNP")" 200
check "delete in use: gone from the API" "$(api GET "/snapshots/$SNP")" 404
check "delete in use: no new sandbox from it" "$(api POST /sandboxes "{\"source\":{\"snapshot\":\"$SNP\"}}")" 404
check "delete in use: the sandbox on it still reads its files" "$(run "$NEW" 'cd app && node -e "console.log(require(\"snaptest-pkg\"))"')" 42
check "delete in use: its layer stays on disk meanwhile" "$(ls -d "$SNAPS/$SNP" 2>/dev/null | wc -l)" 1
api DELETE "/sandboxes/$NEW" >/dev/null
api DELETE "/sandboxes/$NEW2" >/dev/null
check "delete in use: still kept while snapshot $SNP2 stacks it" "$(ls -d "$SNAPS/$SNP" 2>/dev/null | wc -l)" 1
api DELETE "/snapshots/$SNP2" >/dev/null
gone=0
for _ in $(seq 100); do [ -e "$SNAPS/$SNP" ] || [ -e "$SNAPS/$SNP2" ] || { gone=1; break; }; sleep 0.2; done
check "delete: both layers removed once nothing stacks them" "$gone" 1

# ---- nothing left behind of the sandboxes made from snapshots ----
left=0
for s in $NEW $NEW2 $FORKS; do
	for h in /sys/fs/cgroup/*/sandbox/$s /sys/fs/cgroup/sandbox/$s /sys/fs/cgroup/*/sandbox/gvisor_$RN/$s \
		/sys/fs/cgroup/sandbox/gvisor_$RN/$s; do [ -e "$h" ] && left=$((left + 1)); done
	grep -q "$s" /proc/mounts && left=$((left + 1))
	[ -e "$T/state/sandboxes/$s" ] && left=$((left + 1))
done
check "cleanup: no cgroup, mount or dir left of the stopped sandboxes" "$left" 0

# ---- a chain past the depth cap (8 layers) is squashed into one layer ----
snap= made= depths=
for i in 0 1 2 3 4 5 6 7 8; do
	if [ -n "$snap" ]; then S=$(create "{\"source\":{\"snapshot\":\"$snap\"}}"); else S=$(create); fi
	line="echo $i > level$i"
	[ $i = 3 ] && line="$line; rm level1; mkdir d; echo a > d/a"
	[ $i = 5 ] && line="$line; rm -r d; mkdir d; echo b > d/b"
	[ $i = 8 ] && line="$line; rm level2; echo again > level1"
	run "$S" "$line" >/dev/null
	api POST "/sandboxes/$S/snapshots" '{}' >/dev/null
	snap=$(j 'o["id"]') made="$made $snap"
	depths="$depths$(j 'o["depth"]')"
	api DELETE "/sandboxes/$S" >/dev/null
done
check "squash: depth grows to the cap, then the next snapshot is one layer" "$depths" 123456781
L=$(create "{\"source\":{\"snapshot\":\"$snap\"}}")
check "squash: the files are as the last sandbox saw them (deletes, a replaced directory, a file made again)" \
	"$(run "$L" 'for f in level*; do printf "%s=%s " $f $(cat $f); done; ls d; stat -c %U level0 d/b | sort -u')" \
	"level0=0 level1=again level3=3 level4=4 level5=5 level6=6 level7=7 level8=8 b
sandbox"
api DELETE "/sandboxes/$L" >/dev/null
for x in $made; do api DELETE "/snapshots/$x" >/dev/null; done
gone=0
for _ in $(seq 100); do n=0; for x in $made; do [ -e "$SNAPS/$x" ] && n=1; done; [ $n = 0 ] && { gone=1; break; }; sleep 0.2; done
check "squash: every layer of the chain removed once deleted" "$gone" 1

# ---- keep_last ----
ids=
for _ in 1 2 3; do api POST "/sandboxes/$SRC/snapshots" '{"keep_last":2}' >/dev/null; ids="$ids $(j 'o["id"]')"; done
set -- $ids "" "" ""
check "keep_last 2: the oldest of three is gone, the two newest stay" \
	"$(api GET "/snapshots/$1")$(api GET "/snapshots/$2")$(api GET "/snapshots/$3")" 404200200
api DELETE "/snapshots/$2" >/dev/null; api DELETE "/snapshots/$3" >/dev/null

# ---- a sparse file: its holes cost the layer nothing ----
run "$SRC" 'truncate -s 64G sparse.bin && echo tail >> sparse.bin' >/dev/null
check "sparse: a 64 GiB file with 5 bytes of data is snapshotted" "$(api POST "/sandboxes/$SRC/snapshots" '{}'; j 'o["size"] < 1048576')" 201True
SP=$(j 'o["id"]')
check "sparse: its layer on disk is small" "$(( $(du -sk "$SNAPS/$SP" | cut -f1) < 10240 ))" 1
SPS=$(create "{\"source\":{\"snapshot\":\"$SP\"}}")
check "sparse: a sandbox from it sees the same size and data" "$(run "$SPS" 'stat -c %s sparse.bin; tail -c 5 sparse.bin')" "$((64 * 1024 * 1024 * 1024 + 5))
tail"
api DELETE "/sandboxes/$SPS" >/dev/null
api DELETE "/snapshots/$SP" >/dev/null
run "$SRC" 'rm sparse.bin' >/dev/null

# ---- expiry ----
api POST "/sandboxes/$SRC/snapshots" '{"expires_in_ms":1000}' >/dev/null
EXP=$(j 'o["id"]')
gone=0
for _ in $(seq 150); do
	[ "$(api GET "/snapshots/$EXP")" = 404 ] && [ ! -e "$SNAPS/$EXP" ] && { gone=1; break; }
	sleep 0.2
done
check "expiry: the snapshot and its disk are gone" "$gone" 1
check "expiry in the past is refused 422" "$(api POST "/sandboxes/$SRC/snapshots" '{"expires_in_ms":0}')" 422
