# Inspect AI (issue 30): `make inspect` installs the extra fundbook[inspect] -- inspect-ai; its openai and
# openai-api providers run on requirements.lock's openai 3.63.0, the HTTP samplers' own -- from the hashed
# requirements-inspect.lock, over requirements.lock (--no-deps: the lock is complete). The package inspect_fundbook/ registers the task inspect_fundbook/desk through the entry point
# group inspect_ai. `make test` installs it (tests/inspect/); `make verify` re-imports every published Inspect
# attempt from its kept log (verify-inspect).

INSPECT_STAMP := $(VENV)/.inspect-installed
TEST_DEPS += $(INSPECT_STAMP)
.PHONY: inspect verify-inspect

$(INSPECT_STAMP): requirements-inspect.lock $(STAMP)
	$(BIN)/pip install --quiet --no-deps --require-hashes -r requirements-inspect.lock
	$(BIN)/pip install --quiet --no-deps -e .
	@touch $@

inspect: $(INSPECT_STAMP)

verify: verify-inspect
verify-inspect: $(INSPECT_STAMP) build-engine
	$(BIN)/fundbook inspect verify

# The measured peak memory of inspect import, inspect verify and the inspect: sweep arm on a normal log and on
# hostile logs at the limits (printed; tests/inspect/test_memory.py asserts the 512 MiB bound).
BENCH_EXTRA += bench-inspect
.PHONY: bench-inspect
bench-inspect: $(INSPECT_STAMP) build-engine
	$(PYTHON) -m launchers.inspect.bench
