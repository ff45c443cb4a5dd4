# Sourced by tests/client/run.sh (services up, GW_URL and GW_KEY set): the JS
# client as it ships. npm pack makes the tarball; a scratch project installs
# it (its dependency, ws, from the npm cache or the registry); there the
# README's first example runs as it stands with only SANDBOX_URL and
# SANDBOX_API_KEY, tsc --noEmit checks tests/client/typed-example.ts against
# the packed declarations, and a browser bundle of it must need no Node module.

pkg_checks() {
	local tgz want got out S=$T/scratch
	tgz=$(cd clients/js && npm pack --pack-destination "$T" --silent 2>"$T/pack.log" | tail -1)
	if [ -z "$tgz" ] || [ ! -f "$T/$tgz" ]; then
		cat "$T/pack.log"; fail "package: npm pack made no tarball"; return
	fi
	want=$( (printf '%s\n' package/package.json package/README.md package/index.d.ts
		git ls-files clients/js/src | sed 's#^clients/js/#package/#') | sort | tr '\n' ' ')
	check "package: npm pack: $tgz holds package.json, README.md, index.d.ts and every module of src/, nothing else" \
		"$(tar tzf "$T/$tgz" | sort | tr '\n' ' ')" "$want"

	mkdir -p "$S"
	echo '{ "name": "scratch", "private": true, "type": "module" }' >"$S/package.json"
	if ! (cd "$S" && npm install --prefer-offline --no-audit --no-fund --loglevel=error "$T/$tgz") >"$T/install.log" 2>&1; then
		cat "$T/install.log"; fail "package: npm install of the tarball into a scratch project"; return
	fi
	check "package: npm install of the tarball into a scratch project (with ws)" \
		"$(cd "$S" && node -p "require('@sandbox-service/client/package.json').version + ' ' + !!require.resolve('ws')")" \
		"$(node -p "require('./clients/js/package.json').version") true"

	# the README opens with this example; it must run as it stands
	awk '/^```js$/ { f = 1; next } /^```$/ { if (f) exit } f' clients/js/README.md >"$S/example.mjs"
	out=$(cd "$S" && env -i PATH="$PATH" HOME="$HOME" SANDBOX_URL="$GW_URL" SANDBOX_API_KEY="$GW_KEY" \
		timeout 300 node example.mjs 2>&1)
	check "package: the README's example runs as it stands (Node $(node -v), SANDBOX_URL and SANDBOX_API_KEY only)" \
		"$out" "$(printf '42\ntick 1\ntick 2\ntick 3\nexit code 0')"

	cp tests/client/typed-example.ts "$S/"
	cat >"$S/tsconfig.json" <<'JSON'
{ "compilerOptions": { "strict": true, "noEmit": true, "target": "es2022", "module": "nodenext",
    "moduleResolution": "nodenext", "lib": ["es2022", "dom", "dom.iterable"], "types": [] },
  "files": ["typed-example.ts"] }
JSON
	if clients/js/node_modules/.bin/tsc -p "$S/tsconfig.json" >"$T/tsc.log" 2>&1; then
		pass "package: tsc --noEmit --strict of tests/client/typed-example.ts against the packed declarations"
	else
		cat "$T/tsc.log"; fail "package: tsc --noEmit --strict of tests/client/typed-example.ts"
	fi

	# every name the package exports at run time is declared, and nothing more
	got=$(cd "$S" && node --input-type=module -e \
		"console.log(Object.keys(await import('@sandbox-service/client')).sort().join(' '))")
	want=$(grep -oE '^export (declare )?(class|function|const) [A-Za-z]+' "$S/node_modules/@sandbox-service/client/index.d.ts" |
		awk '{ print $NF }' | LC_ALL=C sort | tr '\n' ' ')
	check "package: index.d.ts declares exactly the values the package exports" "$got " "$want"

	# a browser bundle resolves "#platform" to the browser module: no ws, no process
	echo "import { SandboxClient } from '@sandbox-service/client'; globalThis.SandboxClient = SandboxClient;" >"$S/browser.mjs"
	if node_modules/.bin/esbuild --bundle --format=esm --platform=browser --log-level=error \
		"$S/browser.mjs" --outfile="$T/browser-bundle.js" >"$T/esbuild.log" 2>&1; then
		# esbuild heads each bundled module with a comment naming its file
		check "package: a browser bundle of it has platform-browser.js and no Node module (ws, platform-node.js, process.env)" \
			"$(grep -c '^// .*/platform-browser\.js$' "$T/browser-bundle.js") $(grep -cE '^// .*(/ws/|/platform-node\.js$)' "$T/browser-bundle.js") $(grep -c 'process\.env' "$T/browser-bundle.js")" \
			"1 0 0"
	else
		cat "$T/esbuild.log"; fail "package: a browser bundle of it (esbuild, platform browser)"
	fi
}
pkg_checks
