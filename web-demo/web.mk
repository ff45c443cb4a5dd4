# The web demo (playground + its JavaScript client), built with Vite from npm.
#   make web    install the npm packages when missing or stale, build web-demo/dist
# The gateway serves web-demo/dist at / (--web-dir). dist/ is a build output,
# not committed: it follows from package-lock.json and the sources here.

WEB_SRC := web-demo/index.html web-demo/vite.config.js \
           $(wildcard web-demo/*.js web-demo/src/*.js web-demo/src/*.css web-demo/public/*) \
           clients/js/package.json $(wildcard clients/js/src/*.js)

.PHONY: web
web: web-demo/dist/index.html

# npm ci installs exactly the lock file; its own record of that install
# (node_modules/.package-lock.json) tells make whether it is current.
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error

web-demo/dist/index.html: $(WEB_SRC) node_modules/.package-lock.json
	node_modules/.bin/vite build --config web-demo/vite.config.js
	@touch $@
