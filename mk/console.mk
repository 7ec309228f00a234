# The web console (console/): a static bundle the gateway serves from dist/console at /console/.
CONSOLE_SOURCES := $(shell find console -type f -not -name '*.gz' 2>/dev/null)

dist/console/index.html: $(CONSOLE_SOURCES) package-lock.json | deps
	vite build -c console/vite.config.ts

.PHONY: console
console: dist/console/index.html

# `make run` serves it; the browser suite (test/console/browser.test.ts) opens it in Debian's
# chromium (no browser download), installed here when missing as the other suites' tools are.
run: console
test-prereqs: console console-browser

.PHONY: console-browser
console-browser:
	@test -x /usr/bin/chromium || { apt-get update && apt-get install -y chromium fonts-liberation; }
typecheck: console-typecheck

.PHONY: console-typecheck
console-typecheck: deps
	tsc -p console/tsconfig.json --noEmit

# The README's screenshots (docs/images), taken by the browser suite against a real gateway.
.PHONY: screenshots
screenshots: console console-browser
	SWITCHYARD_SCREENSHOTS=docs vitest run test/console/browser.test.ts test/console/playground.test.ts test/console/operations.test.ts
