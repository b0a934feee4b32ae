# The experiment layer (experiments/): the shipped comparisons and the grader
# certificate. `make build` builds them inside build-pyodide (mk/builders.mk),
# in the build's one Pyodide runtime; `make build-experiments` alone does the
# same with a runtime of its own. Either way it reuses
# the committed rows of runs/comparisons and runs/certificates when their
# evaluator id is this checkout's (else recomputes them), re-checks a fresh
# random sample on host CPython and through the bundle in Pyodide, decides,
# verifies every decision from its evidence and writes build/experiments/.
# `make experiments-recompute` regenerates every shipped observation (commit
# runs/comparisons and runs/certificates afterwards); `make verify-experiments`
# recomputes into a scratch folder and compares the bytes.

BENCH_EXTRA += bench-experiments
.PHONY: build-experiments experiments-recompute verify-experiments bench-experiments test-experiments

build-experiments: build-engine
	$(PYTHON) -m experiments build

experiments-recompute: build-engine
	$(PYTHON) -m experiments recompute

verify-experiments: build-engine
	$(PYTHON) -m experiments verify

bench-experiments: $(STAMP)
	@$(PYTHON) -m experiments bench

test-experiments: $(STAMP) node_modules/.installed
	$(BIN)/pytest -n 2 --dist loadgroup tests/experiments
