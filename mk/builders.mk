# The engine bundle and the published runs (builders/bundle, builders/runs).
# `make build` runs build-pyodide: ONE pinned Pyodide runtime (Node) compiles
# engine/ into build/engine/, executes every fixture through that bundle (with
# a host-CPython parity check) into runs/, compiles the desk's stdlib
# (skipped when current) and re-checks the shipped experiments' sample
# (mk/experiments.mk). runs/ is rewritten only when every check passed, and
# a record whose content did not change keeps its published volatile part, so
# an unchanged publication is rewritten byte for byte. Measured times go to
# build/timings/. node_modules/.installed (npm ci) is defined in mk/site.mk;
# DESK_STDLIB in mk/desk.mk.

BUILD_STAGES += build-pyodide
TEST_DEPS += node_modules/.installed
BENCH_EXTRA += bench-runs
RUNS_BUILD = $(PYTHON) -m builders.runs build --compile-engine --bundle build/engine --out runs
# make build: the same in one runtime, then the experiments stage (composed above both layers)
FULL_BUILD = $(PYTHON) -m fundbook.build --compile-engine --bundle build/engine --out runs
.PHONY: build-pyodide build-engine build-runs publish-runs verify bench-runs test-builders

build-pyodide: $(STAMP) node_modules/.installed
	$(FULL_BUILD) --stdlib $(DESK_STDLIB)

# The stages alone (each loads the runtime once).
build-engine: $(STAMP) node_modules/.installed
	$(PYTHON) -m builders.bundle build --out build/engine

build-runs: $(STAMP) node_modules/.installed
	$(RUNS_BUILD)

# Rewrite every committed record with this build's volatile part (times,
# host): the explicit way to republish; commit the result as "runs: ...".
publish-runs: $(STAMP) node_modules/.installed
	$(RUNS_BUILD) --volatile fresh

# Rebuild bundle and runs from this checkout in a scratch directory and check
# every published byte of runs/ (EXPECT_HEAD=<hex> holds the index to that published head).
# Every published byte of runs/: the build's runs, then the attempts (every
# record and its tables), then the experiments (recomputed, about 3 minutes).
verify: $(STAMP) node_modules/.installed
	$(PYTHON) -m builders.runs verify --committed runs $(if $(EXPECT_HEAD),--expect-head $(EXPECT_HEAD))
	$(BIN)/fundbook-launch export --attempts runs/attempts --out-dir runs --check
	@$(MAKE) --no-print-directory verify-experiments

bench-runs: $(STAMP) node_modules/.installed
	@$(PYTHON) -m builders.runs bench $(if $(BENCH_PASSES),--passes $(BENCH_PASSES))

test-builders: $(STAMP) node_modules/.installed
	$(BIN)/pytest -n 2 --dist loadgroup tests/builders
