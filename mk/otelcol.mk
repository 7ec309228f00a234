# The OpenTelemetry Collector the tracing tests (test/tracing) export to: the collector's OTLP
# receiver and the contrib file exporter in one binary, built from test/otelcol's pinned Go modules
# like the control plane (no release download). Rebuilt only when its sources change. A cold build
# (empty module and build caches) is about 155 CPU-seconds: 4 min 40 s on a 2-core machine at load 11.
OTELCOL_SRC     := test/otelcol
OTELCOL_BIN     := .cache/tools/otelcol/otelcol
OTELCOL_SOURCES := $(OTELCOL_SRC)/main.go $(OTELCOL_SRC)/go.mod $(OTELCOL_SRC)/go.sum

.PHONY: otelcol-build test-prereqs

otelcol-build: $(OTELCOL_BIN)

# flock: parallel callers (test workers, make -j) build one at a time; the second finds it built.
$(OTELCOL_BIN): $(OTELCOL_SOURCES)
	@mkdir -p $(@D)
	@echo "building the OpenTelemetry Collector from Go modules (test/otelcol; the first build takes a few minutes)"
	flock $(@D)/.build.lock sh -c 'cd $(OTELCOL_SRC) && CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" \
	  go build -trimpath -ldflags "-s -w" -o $(CURDIR)/$@.tmp . && mv $(CURDIR)/$@.tmp $(CURDIR)/$@'

test-prereqs: otelcol-build
