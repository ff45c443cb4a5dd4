#!/bin/bash
# A generated Vite app in the default image (issue 22): its files as
# `npm create vite` writes them (the vanilla template) and its package.json
# and lock from tests/images/vite-app (engines ">=20.19", Vite 8, whose own
# engines refuse Node 18), the packages from an npm cache that `make
# node-deps` filled on the host (build/vite-app/npm-cache): the sandbox has
# no network. The app and the cache go in through the files API as one
# tar; `npm ci --offline --engine-strict` installs it; the dev server's page
# and its HMR WebSocket (an edit through the files API gives an update)
# come through the preview proxy. Sourced by tests/images/run.sh (defines
# images_vite ID-less: it makes its own sandbox); run on its own:
# tests/images/vite.sh.

vite_app() { # dir: the vanilla template's files
	mkdir -p "$1/src" "$1/public"
	cp tests/images/vite-app/package.json tests/images/vite-app/package-lock.json "$1/"
	cat >"$1/index.html" <<-'HTML'
	<!doctype html>
	<html lang="en">
	  <head>
	    <meta charset="UTF-8" />
	    <meta name="viewport" content="width=device-width, initial-scale=1.0" />
	    <title>vite-app</title>
	  </head>
	  <body>
	    <div id="app"></div>
	    <script type="module" src="/src/main.js"></script>
	  </body>
	</html>
	HTML
	cat >"$1/src/main.js" <<-'JS'
	import './style.css'
	document.querySelector('#app').innerHTML = `<h1>Hello Vite!</h1>`
	JS
	printf 'h1 { font-size: 3.2em; }\n' >"$1/src/style.css"
	printf 'node_modules\ndist\n' >"$1/.gitignore"
}

images_vite() { # gateway-url key
	local u=$1/v1 a="Authorization: Bearer $2" port=${1##*:} id host out st
	local cache=build/vite-app/npm-cache
	if [ ! -d "$cache" ]; then
		skip "vite: no npm cache of the app's packages ($cache: make node-deps)"
		return
	fi
	vite_app "$T/vite/app"
	cp -a "$cache" "$T/vite/npm-cache"
	tar -czf "$T/vite.tgz" -C "$T/vite" app npm-cache
	id=$(curl -s -m 120 -H "$a" -d '{"ports":[3000],"memory_mb":1024,"timeout_ms":600000}' "$u/sandboxes" |
		python3 -c 'import json,sys;print(json.load(sys.stdin).get("id",""))' 2>/dev/null)
	[ -n "$id" ] || { fail "vite: no sandbox"; return; }
	vout() { python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["stdout"].strip())' "$T/vite.out" 2>/dev/null; }
	vsh() { # shell command in the sandbox: its exit code; its result in T/vite.out
		curl -s -m 300 -H "$a" -d "$(python3 -c 'import json,sys;print(json.dumps({"cmd":"sh","args":["-c",sys.argv[1]]}))' "$1")" \
			"$u/sandboxes/$id/commands" >"$T/vite.out"
		python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); print(o.get("exit_code"))' "$T/vite.out" 2>/dev/null
	}
	st=$(curl -s -m 300 -o /dev/null -w '%{http_code}' -X PUT -H "$a" --data-binary @"$T/vite.tgz" \
		"$u/sandboxes/$id/files?path=vite.tgz")
	check "vite: the app and the npm cache go in through the files API" "$st $(vsh 'tar -xzf vite.tgz && rm vite.tgz')" "200 0"
	check "vite: the default image's node satisfies the app's engines (>=20.19)" \
		"$(vsh 'node -p "const [a, b] = process.versions.node.split(\".\").map(Number); a > 20 || (a == 20 && b >= 19)"') $(vout)" "0 true"
	out=$(vsh 'cd app && npm ci --offline --engine-strict --cache /home/sandbox/npm-cache --no-audit --no-fund 2>&1 | tail -5')
	check "vite: npm ci --offline --engine-strict installs it with no network" \
		"$out $(vsh 'node -p "require(\"/home/sandbox/app/node_modules/vite/package.json\").version.split(\".\")[0]"') $(vout)" "0 0 8"
	[ "$out" = 0 ] || python3 -c 'import json,sys;print(json.load(open(sys.argv[1])).get("stdout","")[-800:])' "$T/vite.out"
	# the same install with engines past any Node there is: refused, so the
	# check above is npm's, not a formality
	check "vite: ... while engines the image's node does not meet are refused (EBADENGINE)" \
		"$(vsh 'cp -r app future && cd future && rm -rf node_modules && sed -i "s/>=20.19/>=99/" package.json && npm ci --offline --engine-strict --cache /home/sandbox/npm-cache --no-audit --no-fund 2>&1 | grep -c EBADENGINE') $(vout)" "0 1"
	curl -s -m 60 -o /dev/null -H "$a" \
		-d '{"cmd":"sh","args":["-c","cd app && exec npx vite --host 127.0.0.1 --port 3000 --strictPort"],"detached":true}' \
		"$u/sandboxes/$id/commands"
	host=3000-$id.localhost
	for _ in $(seq 600); do
		st=$(curl -s -m 10 -o "$T/vite.page" -w '%{http_code}' -H "Host: $host" "http://127.0.0.1:$port/")
		[ "$st" = 200 ] && break
		sleep 0.1
	done
	check "vite: the dev server's page comes through the preview proxy" \
		"$st $(grep -c '/@vite/client' "$T/vite.page") $(grep -c '<div id="app">' "$T/vite.page")" "200 1 1"
	printf "import './style.css'\ndocument.querySelector('#app').innerHTML = '<h1>edited</h1>'\n" >"$T/vite.main"
	check "vite: its HMR WebSocket through the preview: connected, and an edit of src/main.js (files API) is pushed" \
		"$(node tests/images/vite-hmr.mjs "$port" "$host" curl -s -m 30 -o /dev/null -X PUT -H "$a" \
			--data-binary @"$T/vite.main" "$u/sandboxes/$id/files?path=app/src/main.js")" \
		"connected full-reload"
	curl -s -m 60 -o /dev/null -H "$a" -X DELETE "$u/sandboxes/$id"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	. "$(dirname "$0")/../lib/harness.sh"
	h_begin images-vite
	why=$(h_services_missing)
	[ -z "$why" ] || h_skip_suite "$why"
	SANDBOX_API_KEYS=key-vite start_services "vite$$" || h_abort "services did not start"
	images_vite "$GW_URL" key-vite
	stop_gateway_checked
	h_finish
fi
