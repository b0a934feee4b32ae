# The paid model-worker path (launchers/). Never part of `make build`: a paid
# attempt needs `fundbook-launch authorise`, an explicit budget and a freeze first.
# `make mock-attempt` regenerates the checked-in mock attempt (sampler mock,
# sandbox local: costs nothing) with a throwaway claim registry and project
# ledger, then the attempts' Parquet tables beside the runs' tables.

BENCH_EXTRA += bench-launchers bench-providers
MOCK_ATTEMPT := runs/attempts/mock-FUND_01-seed-1
.PHONY: launch-self-check mock-attempt bench-launchers bench-providers test-launchers

launch-self-check: $(STAMP)
	$(BIN)/fundbook-launch self-check

mock-attempt: $(STAMP)
	@state=$$(mktemp -d) && \
	FUNDBOOK_LAUNCH_STATE=$$state FUNDBOOK_LAUNCH_PROJECT=$$state/project $(BIN)/fundbook-launch authorise \
	  --family FUND_01 --model mock --cap-micro-usd 0 --cap-tokens 20000000 --hours 1 --out $$state/claim.json && \
	rm -rf $(MOCK_ATTEMPT) && \
	FUNDBOOK_LAUNCH_STATE=$$state FUNDBOOK_LAUNCH_PROJECT=$$state/project $(BIN)/fundbook-launch execute \
	  --claim $$state/claim.json --out $(MOCK_ATTEMPT) \
	  --family FUND_01 --seed 1 --sampler mock --sandbox local --attempt-id mock-FUND_01-seed-1 && \
	$(BIN)/fundbook-launch export --attempts runs/attempts --out-dir runs; \
	rc=$$?; rm -rf $$state; exit $$rc

test-launchers: $(STAMP)
	$(BIN)/pytest -n 2 --dist loadgroup tests/launchers

bench-launchers: $(STAMP)
	$(PYTHON) -m launchers.bench

# One full attempt through each provider path (openai, anthropic, openai-compatible, mock) from the command line
# against the instant stand-in server, in the local and local-isolated sandboxes: the overhead per attempt.
# RUNS=N runs a path (default 3).
bench-providers: $(STAMP)
	@$(PYTHON) -m tests.launchers.bench_providers
