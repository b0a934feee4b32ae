# The engine bundle and the published runs (builders/bundle, builders/runs).
# `make build-engine` compiles engine/ under the pinned Pyodide (npm ci) into
# build/engine/; `make build-runs` executes every fixture through that bundle
# and rewrites runs/ (records, traces, receipts, inputs, index, Parquet,
# schemas) only when every check passed, host-CPython parity included.
# node_modules/.installed (npm ci) is defined in mk/site.mk.

BUILD_STAGES += build-engine build-runs
TEST_DEPS += node_modules/.installed
BENCH_EXTRA += bench-runs
.PHONY: build-engine build-runs verify bench-runs test-builders

build-engine: $(STAMP) node_modules/.installed
	$(PYTHON) -m builders.bundle build --out build/engine

build-runs: build-engine
	$(PYTHON) -m builders.runs build --bundle build/engine --out runs

# Rebuild bundle and runs from this checkout and compare with the committed
# runs/index.json head; prints the first differing record and field.
verify: build-engine
	$(PYTHON) -m builders.runs verify --bundle build/engine --committed runs

bench-runs: build-engine
	@$(PYTHON) -m builders.runs bench --bundle build/engine

test-builders: $(STAMP) node_modules/.installed
	$(BIN)/pytest -n 2 --dist loadgroup tests/builders
