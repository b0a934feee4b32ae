# Inspect AI (issue 30): `make inspect` installs the extra fundbook[inspect] -- inspect-ai and openai for its
# openai-api provider -- from the hashed requirements-inspect.lock, over requirements.lock (--no-deps: the lock
# is complete). The package inspect_fundbook/ registers the task inspect_fundbook/desk through the entry point
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
