# The practice desk and in-browser verification (site/desk, site/assets/desk, builders/desk).
# `make bench-desk` measures in headless Chromium, side by side: a bare
# loadPyodide page, the desk to its first packet, verify once the runtime is
# ready (BENCH_REPEAT=3 cold runs each). `make test-desk` runs the desk's tests.

BENCH_EXTRA += bench-desk
.PHONY: bench-desk test-desk

bench-desk: $(STAMP) node_modules/.installed
	@$(PYTHON) -m builders.desk.bench

test-desk: $(STAMP) node_modules/.installed
	$(BIN)/pytest -n 2 --dist loadgroup tests/desk

# The desk's standard library: only the modules the engine and the desk load
# (builders/desk/stdlib_modules.txt, from an import trace), compiled by the
# pinned runtime, served beside the desk (site/assets/desk/runtime/, ignored
# by git) so Pyodide starts without compiling it and without fetching the
# whole stdlib. Built before the site, and before the tests that load it.
# `make build` compiles it in the runtime build-pyodide already loaded (and
# skips it when its inputs and output are unchanged); alone, build-desk loads
# the runtime for it. `make stdlib-trace` re-traces the desk's imports and
# rewrites the list.
DESK_STDLIB := site/assets/desk/runtime/python_stdlib.zip
DESK_SNAPSHOT := site/assets/desk/runtime/engine.snapshot
DESK_STDLIB_DEPS := builders/desk/stdlib.mjs builders/desk/stdlib_build.mjs builders/desk/stdlib_compile.py \
  builders/desk/stdlib_subset.py builders/desk/stdlib_modules.txt \
  builders/desk/stdlib_stage.py builders/runner/_pyodide.mjs package-lock.json node_modules/.installed
BUILD_STAGES += build-desk
TEST_DEPS += $(DESK_STDLIB) desk-snapshot
.PHONY: build-desk stdlib-trace desk-snapshot precompress

build-desk: $(DESK_STDLIB) desk-snapshot

# The desk's memory snapshot of the started engine (engine.snapshot and its key
# runtime.json beside the stdlib, ignored by git): the worker restores it
# instead of starting Python and importing the engine, when the key names the
# bundle it checked. Made from build/engine (compiled first when it is missing
# or not of these sources); skipped when its inputs are unchanged.
desk-snapshot: $(DESK_STDLIB) $(STAMP) node_modules/.installed
	$(PYTHON) -m builders.desk.snapshot_stage --bundle build/engine --stdlib $(DESK_STDLIB) --compile-if-stale

# Precompressed .br/.gz twins of the built site, which `make preview` (and any
# static host that serves twins) sends with their Content-Encoding: the desk's
# first visit is about 7.6 MiB on the wire instead of 41 MiB.
BUILD_STAGES += precompress
precompress: build-og site  # (in this order, as in `make build`: the twins are of the finished site)
	$(PYTHON) -m builders.desk.precompress public

$(DESK_STDLIB): $(DESK_STDLIB_DEPS) $(STAMP)
	$(PYTHON) -m builders.desk.stdlib_stage --out $@

stdlib-trace: $(STAMP) node_modules/.installed
	$(PYTHON) -m builders.desk.stdlib_trace --write

site: build-desk
bench-desk test-desk: $(DESK_STDLIB) desk-snapshot

# Practitioner records (runs/practitioners/, written by `fundbook practitioner
# import`): `make verify` re-executes each record's submission through the
# bundle and compares every byte (none are published yet: it says so).
.PHONY: verify-practitioners
verify: verify-practitioners
verify-practitioners: $(STAMP) node_modules/.installed
	$(BIN)/fundbook practitioner verify --runs runs
