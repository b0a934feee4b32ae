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

BENCH_EXTRA += bench-experiments bench-exit
.PHONY: build-experiments experiments-recompute verify-experiments bench-experiments bench-exit test-experiments

build-experiments: build-engine
	$(PYTHON) -m experiments build

experiments-recompute: build-engine
	$(PYTHON) -m experiments recompute

verify-experiments: build-engine
	$(PYTHON) -m experiments verify

# The grammar-1 erratum (experiments/erratum.py): every attempt decoded under grammar 1, the days whose truthful
# report it could not state, the points that could have withheld, and each such study's verdicts with them
# restored. `make erratum` writes runs/errata/grammar-1.json; `make verify-erratum` (part of make verify)
# recomputes it from the records and requires it byte for byte.
.PHONY: erratum verify-erratum
verify: verify-erratum
erratum: build-engine
	$(PYTHON) -m experiments.erratum write runs/errata/grammar-1.json

verify-erratum: build-engine
	$(PYTHON) -m experiments.erratum check runs/errata/grammar-1.json

# Every frozen spec committed before the first row or attempt it governs (git history; says so when it cannot check)
.PHONY: verify-prereg
verify: verify-prereg
verify-prereg: $(STAMP)
	@$(PYTHON) -m builders.preregistration

bench-experiments: $(STAMP)
	@$(PYTHON) -m experiments bench

# 200 runs of `fundbook compare --verify`, each exit clean (a few minutes; see experiments/observations.py);
# EXIT_RUNS=1000 for the stress loop (run it niced, with the machine's other load)
bench-exit: $(STAMP)
	@$(PYTHON) -m experiments bench-exit $(if $(EXIT_RUNS),--runs $(EXIT_RUNS)) $(if $(BARE_EVERY),--bare-every $(BARE_EVERY))

test-experiments: $(STAMP) node_modules/.installed
	$(BIN)/pytest -n 2 --dist loadgroup tests/experiments

# The decision rules' calibration and power study (experiments/calibration.py):
# 10,000 simulated null sweeps per rule and shape through experiments/rules.py,
# seeded, a few minutes on 2 cores. `make experiments-calibrate` rewrites
# runs/comparisons/calibration/rules-calibration.json; `make verify-calibration`
# recomputes it and compares the bytes.
.PHONY: experiments-calibrate verify-calibration
experiments-calibrate: $(STAMP)
	$(PYTHON) -m experiments calibrate

verify-calibration: $(STAMP)
	$(PYTHON) -m experiments calibrate --check
