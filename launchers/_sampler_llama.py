"""The local open-weights sampler: llama-cpp-python over a GGUF file, in the
host controller's own process.

The model runs where the ledger runs, never in the worker (which holds no
model, no ledger and no key, as with tinker); nothing is paid, so the worker
may run in the local sandbox and the record says so. Narrow on purpose: the
only surfaces called are `Llama` (load, `tokenize`, `create_completion`,
`metadata`, `reset`, and `eval`, `save_state`, `load_state` for the prefix
store), the model's own chat template through `Jinja2ChatFormatter`,
`LlamaGrammar.from_json_schema`, and for a greedy call `LogitsProcessorList`
with `llama_sampler_init_grammar`, `_apply`, `_accept` and `_free`
(launchers/_llama_grammar_first.py: the grammar checked on the best token
first, the same tokens as the library's chain).

Reproducible by construction: temperature 0 for a checkpoint's first answer
(greedy), a fixed thread count, the model file's sha256, the chat template's
sha256 and every sampling parameter are in `sampling` (which the decision
cache checks on every hit, so an answer recorded with another model file or
template is never reused); the library versions and the CPU features
llama.cpp was compiled for are in `service_info()`. A retry (a conversation
that already holds an answer) changes something: it samples at
`retry_temperature_milli` with a seed that follows from the settings and the
request (`call_seed`) -- at temperature 0 a retry repeats the refused answer. OMP_WAIT_POLICY=PASSIVE is set before
the library loads: its default spin-wait on shared cores fell to 2-4 tokens/s.

Every answer is constrained by the grammar of the day's desk view
(launchers/_grammar.py); the prompt is never allowed to overflow the context
(the answer's budget is cut to what is left, and a prompt that leaves less
than MIN_ANSWER_TOKENS fails the call, recorded). CPU time of every call is
measured (all threads of this process) and charged in the ledger as cpu_ms;
wall time stays out of hashed content (`timings`, for the bench and pilot).
An attempt's first call starts from the stored state of its system turn when
this process has evaluated that turn before (launchers/_llama_prefix.py).
"""

import atexit
import hashlib
import json
import os
import threading
import time

from . import _grammar, _llama_grammar_first, _llama_prefix
from ._errors import CallTimeout, InputError, SamplerError
from ._llama_library import OMP_WAIT_POLICY, _policy, _quiet_stderr, library, versions  # noqa: F401
from ._llama_model import _template_file, default_model_id, file_sha256, packaged_model  # noqa: F401
from ._llama_settings import SETTINGS, call_seed, settings_for
from ._provider import OptionRefused, Provider
from ._sampling import Completion, Prepared, request_sha256
from .worker import prompt

PROVIDER = "llama-cpp"
MIN_ANSWER_TOKENS = 64
TEMPLATE_DATE = "1970-01-01"  # what a chat template's strftime_now sees: never the wall clock
_LOADED = {}  # (file sha256, load settings) -> Llama: one model a process, reset per attempt
# One evaluation at a time per loaded model, across attempts: a call a stopped (or timed-out) attempt abandoned
# may still be evaluating in its thread, and llama.cpp aborts (GGML_ASSERT) when a second call or a reset
# touches the same context meanwhile. A new attempt cancels the abandoned call and waits for it to end.
_IN_USE = {}  # key -> threading.Lock
_IN_FLIGHT = {}  # key -> the running call's _Deadline
RESET_WAIT_S = 300  # at most a prompt's evaluation: a cancelled call ends at its next generated token
_LOCK = threading.Lock()
_PREFIXES = {}  # key -> PrefixStore: the evaluated system turns of this model, across attempts
PREFIX_STORE = True  # False: each attempt's first call evaluates its system turn again (bench-local's old path)
GRAMMAR_FIRST = True  # False: a greedy call checks every token against the grammar (bench-local's old path)


def inspect_model(model_file, chat_template_file=None) -> dict:
    """Everything about the file that can fail, checked before a claim is consumed: it exists, it is a GGUF
    llama.cpp reads (vocabulary only: fast), it has a chat template (its own, or `chat_template_file` for a file
    that ships none, such as a base model). Returns its identity."""
    if not isinstance(model_file, str) or not model_file:
        raise InputError("--model-file: the llama-cpp sampler needs a GGUF file (--model-file PATH.gguf)")
    if not os.path.isfile(model_file):
        raise InputError(f"--model-file {model_file}: no such file")
    llama_cpp = library()
    try:
        sha = file_sha256(model_file)
        with _quiet_stderr():
            vocab = llama_cpp.Llama(model_file, vocab_only=True, verbose=False)
    except OSError as exc:
        raise InputError(f"--model-file {model_file}: cannot read ({exc.strerror or exc})")
    except (ValueError, RuntimeError) as exc:
        raise InputError(f"--model-file {model_file}: llama.cpp cannot load it as a GGUF model ({exc})")
    meta = dict(vocab.metadata)
    vocab.close()  # now, not in __del__ at interpreter exit (after llama_cpp's globals are gone: a traceback)
    template, source = meta.get("tokenizer.chat_template"), "GGUF tokenizer.chat_template"
    if chat_template_file is not None:
        template, source = _template_file(chat_template_file)
    if not isinstance(template, str) or not template:
        raise InputError(
            f"--model-file {model_file}: no chat template (tokenizer.chat_template) in the GGUF metadata: "
            f"give one with --chat-template FILE"
        )
    arch = meta.get("general.architecture")
    return {
        "path": os.path.abspath(model_file),
        "name": os.path.basename(model_file),
        "bytes": os.path.getsize(model_file),
        "sha256": sha,
        "chat_template": template,
        "chat_template_sha256": hashlib.sha256(template.encode("utf-8")).hexdigest(),
        "chat_template_source": source,
        "gguf": {
            k: meta[k]
            for k in (
                "general.name",
                "general.architecture",
                "general.size_label",
                "general.file_type",
                "llama.context_length",
                f"{arch}.context_length",
            )
            if k in meta
        },
        **versions(llama_cpp),
    }


@atexit.register
def _close_loaded():
    """Free the loaded models before the interpreter tears llama_cpp down (its __del__ would print a traceback)."""
    while _LOADED:
        _LOADED.popitem()[1].close()


def _load(llama_cpp, identity, s):
    """(key, Llama): the process's model for these load settings, loaded once."""
    key = (identity["sha256"], s["n_ctx"], s["n_batch"], s["n_threads"], s["n_threads_batch"])
    with _LOCK:
        _IN_USE.setdefault(key, threading.Lock())
        if key not in _LOADED:
            try:
                with _quiet_stderr():
                    _LOADED[key] = llama_cpp.Llama(
                        identity["path"],
                        n_ctx=s["n_ctx"],
                        n_batch=s["n_batch"],
                        n_ubatch=s["n_batch"],
                        n_threads=s["n_threads"],
                        n_threads_batch=s["n_threads_batch"],
                        seed=s["seed"],
                        verbose=False,
                    )
            except (ValueError, RuntimeError) as exc:
                raise SamplerError(f"llama-cpp: cannot load {identity['name']} ({exc})")
        return key, _LOADED[key]


def prefix_store(key) -> _llama_prefix.PrefixStore:
    """The prefix store of the model loaded under `key` (one per loaded model: a state belongs to its context)."""
    with _LOCK:
        return _PREFIXES.setdefault(key, _llama_prefix.PrefixStore())


class _Deadline:
    """A stopping criterion: generation ends at the call's deadline (the controller then records a timeout)."""

    def __init__(self, seconds):
        self.at = time.monotonic() + seconds
        self.passed = False

    def cancel(self):
        self.at = float("-inf")  # generation ends at the next token

    def __call__(self, input_ids, logits):
        self.passed = self.passed or time.monotonic() > self.at
        return self.passed


class LlamaSampler:
    provider = PROVIDER

    def __init__(self, model_id, identity, sampling, llama_cpp=None):
        self.model_id = model_id
        self.identity = identity
        self.sampling = dict(sampling)
        self.lib = llama_cpp or library()
        self.key, self.llm = _load(self.lib, identity, self.sampling)
        self.busy = _IN_USE[self.key]  # shared by every sampler over this model: never two evaluations at once
        abandoned = _IN_FLIGHT.get(self.key)
        if abandoned is not None:  # a stopped attempt's call: its answer is never read
            abandoned.cancel()
        if not self.busy.acquire(timeout=RESET_WAIT_S):
            raise SamplerError(f"llama-cpp: an earlier call on this model did not end within {RESET_WAIT_S} s")
        try:
            self.llm.reset()  # an attempt never depends on what this process evaluated before it
        finally:
            self.busy.release()
        chat = self.lib.llama_chat_format.Jinja2ChatFormatter
        fixed = type(
            "FixedDateFormatter",
            (chat,),
            {"strftime_now": staticmethod(lambda fmt: time.strftime(fmt, time.strptime(TEMPLATE_DATE, "%Y-%m-%d")))},
        )
        self.formatter = fixed(
            identity["chat_template"],
            eos_token=self._piece(self.llm.token_eos()),
            bos_token=self._piece(self.llm.token_bos()),
        )
        self.timings = []  # [(wall_ms, cpu_ms)] per answered call: volatile, for the bench and the pilot

    def _piece(self, token):
        return self.llm.detokenize([token]).decode("utf-8", "replace") if token >= 0 else ""

    def _tokenize(self, text, bos):
        return self.llm.tokenize(text.encode("utf-8"), add_bos=bos, special=True)

    def render(self, messages):
        """Token ids of the conversation with the generation prompt, by the model's own chat template."""
        out = self.formatter(messages=messages)
        return self._tokenize(out.prompt, not out.added_special)

    def system_turn(self, messages, tokens) -> int:
        """How many of the request's tokens are its system turn (what the prefix store keeps)."""
        bos = not self.formatter(messages=messages[:1]).added_special
        return _llama_prefix.system_turn(
            lambda m: self.formatter(messages=m).prompt, lambda text: self._tokenize(text, bos), messages, tokens
        )

    def prepare(self, messages, max_tokens) -> Prepared:
        tokens = self.render(messages)
        view = prompt.view_in(messages)
        try:
            schema = _grammar.batch_schema(view) if view is not None else None
        except ValueError:
            schema = None
        sha = request_sha256(self.model_id, messages, max_tokens, self.sampling)
        retry = any(m.get("role") == "assistant" for m in messages)
        return Prepared(
            sha,
            len(tokens),
            max_tokens,
            messages,
            payload={
                "tokens": tokens,
                "schema": schema,
                "seed": call_seed(self.sampling, sha, retry),
                "prefix": self.system_turn(messages, tokens),
            },
        )

    def sample(self, prepared: Prepared, deadline_s) -> Completion:
        s, payload = self.sampling, prepared.payload
        if payload["schema"] is None:
            raise SamplerError(
                "llama-cpp: the request holds no desk view to build the answer's grammar from "
                f"(the worker must use the {prompt.PROMPT_VERSION} prompt)"
            )
        tokens = payload["tokens"]
        room = s["n_ctx"] - len(tokens)
        if room < MIN_ANSWER_TOKENS:
            raise SamplerError(
                f"llama-cpp: the prompt's {len(tokens)} tokens leave {max(room, 0)} of the "
                f"{s['n_ctx']}-token context for the answer (at least {MIN_ANSWER_TOKENS} needed)"
            )
        if not self.busy.acquire(timeout=max(0.0, deadline_s)):
            raise CallTimeout("llama-cpp: the previous call is still evaluating")
        try:
            grammar = self.lib.LlamaGrammar.from_json_schema(json.dumps(payload["schema"]), verbose=False)
            seed, retry = payload["seed"]
            temperature = (s["retry_temperature_milli"] if retry else s["temperature_milli"]) / 1000
            # what this attempt evaluated before, as without the store: the figure the cache and the ledger record
            # never depends on what else the process ran (the store's saving shows in cpu_ms)
            reused = min(self.llm.longest_token_prefix(self.llm._input_ids.tolist(), tokens), len(tokens) - 1)
            stop = _IN_FLIGHT[self.key] = _Deadline(deadline_s)
            first = None
            c0, w0 = time.process_time(), time.perf_counter()
            try:
                if PREFIX_STORE:
                    prefix_store(self.key).start(self.llm, tokens, payload["prefix"])
                if GRAMMAR_FIRST and temperature == 0:  # the same tokens as the grammar in the chain, checked cheaper
                    first = _llama_grammar_first.GrammarFirst(self.lib, self.llm, grammar)
                out = self.llm.create_completion(
                    prompt=tokens,
                    max_tokens=min(prepared.max_tokens, room),
                    temperature=temperature,
                    top_k=s["top_k"],
                    top_p=s["top_p_milli"] / 1000,
                    min_p=s["min_p_milli"] / 1000,
                    repeat_penalty=s["repeat_penalty_milli"] / 1000,
                    seed=seed,
                    grammar=None if first else grammar,
                    logits_processor=self.lib.LogitsProcessorList([first]) if first else None,
                    stopping_criteria=self.lib.StoppingCriteriaList([stop]),
                )
                if first is not None:
                    first.check()
            except (ValueError, RuntimeError) as exc:
                raise SamplerError(f"llama-cpp: the call failed ({type(exc).__name__}: {exc})")
            finally:
                if first is not None:
                    first.close()
            cpu_ms = round((time.process_time() - c0) * 1000)
            wall_ms = round((time.perf_counter() - w0) * 1000)
        finally:
            _IN_FLIGHT.pop(self.key, None)
            self.busy.release()
        if stop.passed:
            raise CallTimeout(f"llama-cpp: no complete answer within {deadline_s:.0f} s")
        choice = out["choices"][0]
        self.timings.append((wall_ms, cpu_ms))
        return Completion(
            choice["text"],
            int(out["usage"]["prompt_tokens"]),
            int(out["usage"]["completion_tokens"]),
            str(choice.get("finish_reason") or "stop"),
            cache_hit_tokens=max(0, reused),
            cpu_ms=cpu_ms,
        )

    def service_info(self) -> dict:
        i = self.identity
        return {
            "runs": "in the host controller's process (the worker never holds the model)",
            "model_file": {"name": i["name"], "bytes": i["bytes"], "sha256": i["sha256"]},
            "gguf": i["gguf"],
            "chat_template": {
                "sha256": i["chat_template_sha256"],
                "source": i.get("chat_template_source", "GGUF tokenizer.chat_template"),
                "strftime_now": TEMPLATE_DATE,
            },
            "llama_cpp_python": i["llama_cpp_python"],
            "llama_cpp": i["llama_cpp"],
            "system_info": i["system_info"],
            "omp_wait_policy": _policy[0] if _policy else None,
        }


class LlamaCpp(Provider):
    """`--sampler llama-cpp`: open weights in this process, free. Everything that can fail is checked when it is
    built, before a claim is consumed (the library imports, the file is a GGUF with a chat template, the
    settings, the cache). Every call goes through the decision cache: `cache_path`, or a store in memory exported
    into the attempt's folder. `model_file` may name a packaged model ("packaged", "packaged:gemma3-270m"): its
    file, and its template when fundbook supplies one. Any of SETTINGS but the temperature and seed may be set."""

    name = PROVIDER
    OPTIONS = {
        "model_file": None,
        "chat_template_file": None,
        **{k: v for k, v in SETTINGS.items() if k not in ("temperature_milli", "seed")},
    }
    FLAGS = "--model-file"
    REFUSED_ELSEWHERE = ("model_file",)
    DEFAULT_TEMPERATURE = 0
    FREE = True

    @classmethod
    def check_own(cls, own):
        if own.get("model_file") is None:
            raise OptionRefused("--sampler llama-cpp needs --model-file PATH.gguf")

    def _setup(self):
        from . import _packaged
        from ._sampler_cache import open_store

        own = dict(self.options.own)
        model_file, chat_template_file = own.pop("model_file", None), own.pop("chat_template_file", None)
        name = _packaged.name_of(model_file)
        if name is not None:
            model_file = _packaged.model_path(name)
            chat_template_file = chat_template_file or _packaged.chat_template_file(name)
        self.identity = inspect_model(model_file, chat_template_file)
        sampling = settings_for(self.identity, self.temperature_milli, self.options.seed, **own)
        if self.options.cache_path:
            open_store(self.options.cache_path)
        self.model_id = default_model_id(self.identity)
        return sampling

    def build(self, model):
        from ._sampler_cache import CacheSampler

        return CacheSampler(
            self.options.cache_path or None, model, inner=LlamaSampler(model, self.identity, self.sampling)
        )
