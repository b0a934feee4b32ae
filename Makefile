# fundbook: `make build` builds the reference publication, `make test` checks it.
# The Makefile bootstraps everything it needs: a virtual environment from the
# hashed lock (requirements.lock) and the pinned npm runtime (npm ci).

PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PYTHON := $(BIN)/python
STAMP := $(VENV)/.installed
export PYTHONHASHSEED := 0
# The bundle's one zip timestamp: a pinned build input like the Pyodide version,
# so an ambient SOURCE_DATE_EPOCH is ignored (`make build` must reproduce the
# committed bundle). `make verify SOURCE_DATE_EPOCH=N` overrides it on purpose,
# and verify then names it as the build input that differs.
export SOURCE_DATE_EPOCH := 1788739200

.PHONY: help venv lint test build bench fuzz clean
.DEFAULT_GOAL := help

help:
	@echo "make build   build the reference publication (engine bundle, runs, images, site)"
	@echo "make test    run the test suite but its long tail (at most 10 minutes on 2 cores)"
	@echo "make lint    ruff's lint and format check (part of make test)"
	@echo "make test-long  the long tail (tests marked long; CI runs it after make test)"
	@echo "make verify  rebuild from this checkout and check every published byte of runs/"
	@echo "make bench   print the benchmark figures"
	@echo "make fuzz    10,000 fuzzed batches against the desk runtime"

$(STAMP): requirements.lock pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/pip install --quiet --no-deps -e .
	@touch $@

venv: $(STAMP)

# What a plain `pip install .` resolves to (requirements-runtime.lock, hashed),
# downloaded once as wheels so tests/test_install.py installs the project into
# a fresh venv without extras, offline.
WHEELHOUSE := build/wheelhouse
$(WHEELHOUSE)/.downloaded: requirements-runtime.lock $(STAMP)
	rm -rf $(WHEELHOUSE)
	$(BIN)/pip download --quiet --require-hashes --only-binary :all: --no-deps -r requirements-runtime.lock -d $(WHEELHOUSE)
	@touch $@
TEST_DEPS += $(WHEELHOUSE)/.downloaded

# Each area keeps its own targets in mk/<area>.mk.
-include mk/*.mk

# Three workers on two cores: a third of the suite waits on Chromium, Node or a subprocess, and the
# third worker fills those waits (TEST_WORKERS=2 for the old setting).
TEST_WORKERS ?= 3
# --durations: every run (CI's too) names its 25 slowest tests, where the time goes. TIMED prints the
# target's wall time last (pytest's closing line is its own time, without the prerequisites); it keeps
# pytest's exit code, except 5 ("no tests collected": a selection that holds no test is not a failure).
TIMED = started=$$(date +%s); $(1); rc=$$?; [ $$rc -eq 5 ] && rc=0; \
	echo "make $@: $$(( $$(date +%s) - started )) s wall time (exit $$rc)"; exit $$rc
# ruff's lint and format check ([tool.ruff] in pyproject.toml; hash-pinned files are excluded there)
lint: $(STAMP)
	$(BIN)/ruff check --quiet .
	$(BIN)/ruff format --check --quiet .

test: $(STAMP) $(TEST_DEPS) lint
	@$(call TIMED,$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup --durations=25 -m "not long" $(PYTEST_ARGS))

# The long tail (tests marked `long`: the fresh-clone build, the real model, the long kill-trial series,
# the full fuzz profile, the long browser walks), each with a faster sibling in `make test`. CI runs it
# after `make test`. TEST_LONG_DEPS: what only the long tail needs (the compiled llama-cpp-python).
.PHONY: test-long
test-long: $(STAMP) $(TEST_DEPS) $(TEST_LONG_DEPS)
	@$(call TIMED,$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup --durations=25 -m long $(PYTEST_ARGS))

bench: $(STAMP) $(BENCH_DEPS)
	$(PYTHON) -m fundbook.bench
	@for b in $(BENCH_EXTRA); do $(MAKE) --no-print-directory $$b || exit 1; done

fuzz: $(STAMP)
	FUNDBOOK_FUZZ=10000 $(BIN)/pytest -q tests/engine/test_fuzz.py -p no:randomly -m "not long"

build: $(STAMP) $(BUILD_STAGES)

clean:
	rm -rf build public .pytest_cache
