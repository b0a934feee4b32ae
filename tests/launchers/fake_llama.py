"""A pure-Python fake of exactly the llama-cpp-python surface launchers/_sampler_llama.py calls, so `make test`
covers the local sampler's contracts without compiling the library (the real library and model run in
tests/launchers/test_llama_real.py, under `make test-long`).

Only the model is replaced: the sampler module, its deadline, its in-flight lock, its grammar, the worker, the
controller and the ledger are the real ones. `install(monkeypatch)` puts the fake where `import llama_cpp` finds
it; the sampler's own `library()` then imports it as it would the real one.

The "model": a token is up to three bytes of text (reversible, so the fake reads its prompt back); its answer is
greedy and deterministic -- the do-nothing batch of the desk view in the prompt, reporting the view's own
projection (`report_if_no_action`), filled in by the grammar's JSON Schema and checked against it (the real
grammar makes any other answer impossible). `max_tokens` cuts the answer (finish_reason "length"), and every
generated token goes through the stopping criteria, as llama.cpp's loop does. What it holds evaluated is
tracked as the library does: a completion reuses the longest prefix of the tokens it holds (at least one prompt
token is evaluated), `eval` appends, `reset` empties, `save_state`/`load_state` copy; `evals` lists how many
tokens each `eval` and completion evaluated, so tests count the work the prefix store saves.
"""

import ctypes
import json
import sys
import threading
import types

import jinja2
import jsonschema

from launchers.worker import prompt

MAGIC = b"GGUF-FAKE\n"
BOS, EOS = 1, 2
SPECIAL = {BOS: b"<s>", EOS: b"</s>"}
TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
METADATA = {
    "general.name": "Fake",
    "general.architecture": "llama",
    "general.size_label": "1K",
    "general.file_type": "3",
    "llama.context_length": "8192",
    "tokenizer.chat_template": TEMPLATE,
}


def write_model(path, metadata=None):
    """A GGUF file the fake loads: its magic, then its metadata as JSON."""
    with open(path, "wb") as fh:
        fh.write(MAGIC + json.dumps(METADATA if metadata is None else metadata, sort_keys=True).encode())
    return str(path)


def encode(data: bytes) -> list:
    return [(len(data[i : i + 3]) << 24) | int.from_bytes(data[i : i + 3], "big") for i in range(0, len(data), 3)]


def decode(tokens) -> bytes:
    out = b""
    for t in tokens:
        out += SPECIAL[t] if t in SPECIAL else (t & 0xFFFFFF).to_bytes(t >> 24, "big")
    return out


def _instance(schema, given=None):
    """The first instance of a grammar's schema, taking `given`'s values where they fit."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return given if given in schema["enum"] else schema["enum"][0]
    if "anyOf" in schema:
        return _instance(schema["anyOf"][0], given)
    kind = schema.get("type")
    if kind == "object":
        given = given if isinstance(given, dict) else {}
        return {k: _instance(s, given.get(k)) for k, s in schema["properties"].items()}
    if kind == "array":
        items = given if isinstance(given, list) else []
        return [_instance(schema["items"], v) for v in items[: schema.get("maxItems", len(items))]]
    if kind == "integer":
        return given if isinstance(given, int) and not isinstance(given, bool) else 0
    raise AssertionError(f"the fake has no instance for {schema}")


def answer(prompt_text, schema) -> str:
    """Today's do-nothing batch, reporting the view's projection: what a careful greedy model would send."""
    start = prompt_text.find(prompt.VIEW_OPEN + "\n")
    body = prompt_text[start + len(prompt.VIEW_OPEN) + 1 :]
    view = json.loads(body[: body.find("\n" + prompt.FENCE_CLOSE)]) if start >= 0 else {}
    batch = _instance(schema, {"day": view.get("day"), "actions": [], "report": view.get("report_if_no_action")})
    jsonschema.validate(batch, schema)  # the grammar's guarantee
    return json.dumps(batch, separators=(",", ":"))


class LlamaGrammar:
    def __init__(self, schema):
        self.schema = schema
        self._grammar, self._root = json.dumps(schema), "root"  # what a greedy call's GrammarFirst reads

    @classmethod
    def from_json_schema(cls, json_schema, verbose=True):
        return cls(json.loads(json_schema))


class StoppingCriteriaList(list):
    def __call__(self, input_ids, logits):
        return any(criterion(input_ids, logits) for criterion in self)


class LogitsProcessorList(list):
    pass


class llama_token_data(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int32), ("logit", ctypes.c_float), ("p", ctypes.c_float)]


class llama_token_data_array(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.POINTER(llama_token_data)),
        ("size", ctypes.c_size_t),
        ("selected", ctypes.c_int64),
        ("sorted", ctypes.c_bool),
    ]


class _Ids(list):
    def tolist(self):
        return list(self)


class Llama:
    loaded = []  # every model loaded (not vocab-only): the tests count them
    stall = None  # a threading.Event: while set, generation produces no token (an endless evaluation)

    def __init__(self, model_path, vocab_only=False, verbose=True, **params):
        with open(model_path, "rb") as fh:  # OSError as the real library's open would
            data = fh.read()
        if not data.startswith(MAGIC):
            raise ValueError(f"Failed to load model from file: {model_path}")
        self.metadata = json.loads(data[len(MAGIC) :])
        self.params = dict(params, vocab_only=vocab_only)
        self._input_ids = _Ids()
        self._model = types.SimpleNamespace(vocab=None)
        self.resets = 0
        self.evals = []  # tokens evaluated by each eval and create_completion, in order
        if not vocab_only:
            Llama.loaded.append(self)

    def close(self):
        pass

    def reset(self):
        self.resets += 1
        self._input_ids = _Ids()

    def eval(self, tokens):
        self._input_ids.extend(tokens)
        self.evals.append(len(tokens))

    def save_state(self):
        return types.SimpleNamespace(input_ids=list(self._input_ids))

    def load_state(self, state):
        self._input_ids = _Ids(state.input_ids)

    def token_bos(self):
        return BOS

    def n_vocab(self):
        return 1 << 24  # a token is up to three bytes

    def token_eos(self):
        return EOS

    def tokenize(self, text, add_bos=True, special=False):
        return ([BOS] if add_bos else []) + encode(text)

    def detokenize(self, tokens):
        return decode(tokens)

    @staticmethod
    def longest_token_prefix(a, b):
        n = 0
        for x, y in zip(a, b):
            if x != y:
                break
            n += 1
        return n

    def create_completion(
        self,
        prompt,
        max_tokens,
        temperature,
        top_k,
        top_p,
        min_p,
        repeat_penalty,
        seed,
        grammar,
        stopping_criteria,
        logits_processor=None,
    ):
        if grammar is None:  # a greedy call decodes under the grammar its GrammarFirst holds
            (first,) = logits_processor
            grammar = first.grammar
        self.last_call = {"temperature": temperature, "grammar_first": logits_processor is not None}
        text = decode(t for t in prompt if t not in SPECIAL).decode("utf-8")
        tokens = encode(answer(text, grammar.schema).encode())
        reused = min(self.longest_token_prefix(self._input_ids, prompt), len(prompt) - 1)
        self.evals.append(len(prompt) - reused)
        ids, out, reason = _Ids(prompt), [], "stop"
        for token in tokens:
            while Llama.stall is not None and Llama.stall.is_set() and not stopping_criteria(ids, None):
                threading.Event().wait(0.01)
            if stopping_criteria(ids, None):
                break
            if len(out) == max_tokens:
                reason = "length"
                break
            out.append(token)
            ids.append(token)
        self._input_ids = ids
        return {
            "choices": [{"text": decode(out).decode("utf-8"), "finish_reason": reason}],
            "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(out)},
        }


class Jinja2ChatFormatter:
    def __init__(self, template, eos_token, bos_token, add_generation_prompt=True, stop_token_ids=None):
        self.template = jinja2.Environment(loader=jinja2.BaseLoader()).from_string(template)
        self.eos_token, self.bos_token = eos_token, bos_token

    def __call__(self, *, messages, **kwargs):
        text = self.template.render(
            messages=messages,
            eos_token=self.eos_token,
            bos_token=self.bos_token,
            add_generation_prompt=True,
            strftime_now=self.strftime_now,
        )
        return types.SimpleNamespace(prompt=text, added_special=True)

    @staticmethod
    def strftime_now(fmt):
        raise AssertionError("the sampler pins the template's date")


def module():
    lib = types.ModuleType("llama_cpp")
    chat = types.ModuleType("llama_cpp.llama_chat_format")
    chat.Jinja2ChatFormatter = Jinja2ChatFormatter
    lib.llama_chat_format = chat
    lib.Llama, lib.LlamaGrammar, lib.StoppingCriteriaList = Llama, LlamaGrammar, StoppingCriteriaList
    lib.LogitsProcessorList, lib.llama_token_data, lib.llama_token_data_array = (
        LogitsProcessorList,
        llama_token_data,
        llama_token_data_array,
    )
    # the grammar sampler's handle: the fake decodes by the grammar's schema, never through these
    lib.llama_sampler_init_grammar = lambda vocab, grammar, root: 1
    lib.llama_sampler_free = lambda sampler: None
    lib.llama_version = lambda: b"fake"
    lib.llama_print_system_info = lambda: b"pure-Python fake (tests/launchers/fake_llama.py) | "
    return lib, chat


def install(monkeypatch):
    """`import llama_cpp` finds the fake for the rest of the test; the library's installed version is the lock's."""
    from launchers import _sampler_llama

    lib, chat = module()
    monkeypatch.setitem(sys.modules, "llama_cpp", lib)
    monkeypatch.setitem(sys.modules, "llama_cpp.llama_chat_format", chat)
    monkeypatch.setattr(
        _sampler_llama,
        "versions",
        lambda llama_cpp: {
            "llama_cpp_python": "0.3.36",
            "llama_cpp": llama_cpp.llama_version().decode(),
            "system_info": llama_cpp.llama_print_system_info().decode().strip(),
        },
    )
    for name in ("_LOADED", "_IN_USE", "_IN_FLIGHT", "_PREFIXES"):  # the fake's models never outlive the test
        monkeypatch.setattr(_sampler_llama, name, {})
    monkeypatch.setenv("OMP_WAIT_POLICY", _sampler_llama.OMP_WAIT_POLICY)
    monkeypatch.setattr(Llama, "loaded", [])
    monkeypatch.setattr(Llama, "stall", None)
    return lib
