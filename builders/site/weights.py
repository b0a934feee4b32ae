"""Which weights a model attempt ran: the board's model headings, the home page's model count and the model
cards group attempts by this, not by provider and model id (one set of weights reached three ways is one model).

`identity(content)` reads it from the record alone:

- the sampler hashed the file it loaded (`sampling.model_sha256`, the local llama-cpp sampler): that sha256,
  basis "sha256";
- a server on this host answered (an OpenAI-compatible attempt with `sampling.local_server`, or an Inspect
  attempt whose `inspect.model_base_url` is a loopback address): the name the server reported
  (`service.model_reported`, Inspect's `model.answered_as`, else the model id) matched to a packaged model's file
  name (the name with or without ".gguf"): that file's sha256, basis "served name". A server reports no hash,
  so this is the name the operator served the file under, said as such on every row it decides;
  a local name that matches no packaged file is its own weights, "local:<name>";
- anything else is a hosted model: "<provider>:<model id>", basis "provider model id".

The packaged models are launchers/_packaged.py's MODELS table, read here as data (ast.literal_eval of the
assignment: builders sit below launchers and import nothing from them). site/assets/fundbook/board.js
`weightsOf` is this function in the reader's browser, with the table from leaderboard.json.
"""

import ast
import hashlib
import re
from functools import lru_cache
from pathlib import Path

from .counted import is_inspect
from .records import SiteInputError

ROOT = Path(__file__).resolve().parents[2]
PACKAGED = ROOT / "launchers" / "_packaged.py"
TEMPLATES = ROOT / "launchers" / "templates"
HEX64 = re.compile(r"^[0-9a-f]{64}$")
LOOPBACK = re.compile(r"^https?://(127\.[0-9.]+|localhost|\[::1\])(:[0-9]+)?(/|$)")
BASIS = {
    "sha256": "the sha256 of the file the sampler loaded, as its record states",
    "served name": "the name a server on this host served the file under (a server reports no hash)",
    "provider model id": "the provider's model id (hosted weights are known by name only)",
}
SHORT = {
    "sha256": "weights: the file's sha256, as the sampler recorded it",
    "served name": "weights: the packaged file of the name the server served (no hash reported)",
    "provider model id": "weights: known by the provider's model id",
}


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


@lru_cache(maxsize=None)
def packaged() -> dict:
    """{name: entry} of launchers/_packaged.py's MODELS, each entry with `name` and, for a template fundbook
    supplies, `chat_template_sha256` and `chat_template_text` added."""
    try:
        tree = ast.parse(PACKAGED.read_text(encoding="utf-8"), str(PACKAGED))
    except (OSError, SyntaxError) as exc:
        raise SiteInputError(f"launchers/_packaged.py: cannot read the packaged models ({exc})") from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["MODELS"]:
            try:
                table = ast.literal_eval(node.value)
            except ValueError:
                raise SiteInputError("launchers/_packaged.py: MODELS: expected a literal table") from None
            break
    else:
        raise SiteInputError("launchers/_packaged.py: no MODELS table")
    out = {}
    for name, entry in table.items():
        entry = dict(entry, name=name)
        if not isinstance(entry.get("sha256"), str) or not HEX64.match(entry["sha256"]):
            raise SiteInputError(f"launchers/_packaged.py: MODELS[{name!r}].sha256: expected 64 hex digits")
        template = entry.get("chat_template")
        if template is not None:
            data = (TEMPLATES / template).read_bytes()
            entry.update(chat_template_sha256=hashlib.sha256(data).hexdigest(), chat_template_text=data.decode("utf-8"))
        out[name] = entry
    return out


def by_sha(sha):
    return next((e for e in packaged().values() if e["sha256"] == sha), None)


def _by_file_name(name):
    for entry in packaged().values():
        stem = entry["file"][:-5] if entry["file"].lower().endswith(".gguf") else entry["file"]
        if name in (entry["file"], stem):
            return entry
    return None


def served_name(content):
    """The name a local server answered under, or None when no server on this host answered."""
    model = _dict(content.get("model"))
    if is_inspect(content):
        if not LOOPBACK.match(str(_dict(content.get("inspect")).get("model_base_url") or "")):
            return None
        name = model.get("answered_as") or str(model.get("id") or "").rsplit("/", 1)[-1]
        return name if isinstance(name, str) and name else None
    if model.get("provider") == "openai-compatible" and _dict(content.get("sampling")).get("local_server"):
        reported = _dict(content.get("service")).get("model_reported")
        name = reported[0] if isinstance(reported, list) and reported else model.get("id")
        return name if isinstance(name, str) and name else None
    return None


def identity(content) -> dict:
    """{weights, basis}: the weights an attempt ran (see the module's docstring)."""
    sha = _dict(content.get("sampling")).get("model_sha256")
    if isinstance(sha, str) and HEX64.match(sha):
        return {"weights": sha, "basis": "sha256"}
    served = served_name(content)
    if served is not None:
        entry = _by_file_name(served)
        return {"weights": entry["sha256"] if entry else f"local:{served}", "basis": "served name"}
    model = _dict(content.get("model"))
    return {"weights": f"{model.get('provider', '?')}:{model.get('id', '?')}", "basis": "provider model id"}


def heading(weights, names) -> dict:
    """What a model heading says of its weights: {weights, name, tuning, base, packaged, slug}; `names` are the
    model ids its rows ran under (a hosted or unknown model is named by its first)."""
    entry = by_sha(weights)
    if entry:
        return {
            "weights": weights,
            "name": entry["title"],
            "tuning": entry["tuning"],
            "base": entry["tuning"].startswith("base"),
            "packaged": entry["name"],
            "slug": entry["name"],
        }
    name = sorted(names)[0] if names else weights
    return {"weights": weights, "name": name, "tuning": None, "base": False, "packaged": None, "slug": slug(weights)}


def slug(weights) -> str:
    """A card's folder for weights no package names: the sha256's first 12 digits, or for a name (a hosted model's
    id, a served name) the first 12 of the sha256 of its UTF-8 (a lone surrogate read as U+FFFD, as a browser
    encodes it): never a record's text in an address."""
    if HEX64.match(weights):
        return weights[:12]
    return hashlib.sha256(re.sub("[\ud800-\udfff]", "\ufffd", weights).encode("utf-8")).hexdigest()[:12]


def table() -> dict:
    """leaderboard.json's `packaged` table: what the reader's browser needs to name weights as this module does
    ({sha256: {name, title, file, tuning}})."""
    return {
        e["sha256"]: {"name": e["name"], "title": e["title"], "file": e["file"], "tuning": e["tuning"]}
        for e in packaged().values()
    }
