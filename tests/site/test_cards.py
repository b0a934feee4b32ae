"""A model card per set of weights (builders/site/cards.py, models/<slug>/): where the weights come from, base or
instruction-tuned, licence, quantisation, context length, the chat template, and every attempt and decision that
used them. Expected values are read here from launchers/_packaged.py, the template files and the records."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from builders.site import cards, pages, records, weights
from launchers import _packaged
from tests.site.boards import GEMMA, MOCK, SMOL, attempt, two_models
from tests.site.text import plain

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fab(tmp_path_factory):
    if not (MOCK / "record.json").is_file():
        pytest.skip("needs the published mock attempt")
    runs = two_models(tmp_path_factory.mktemp("cards") / "runs")
    attempt(
        runs,
        "hosted-FUND_01-seed-3",
        seed=3,
        points=50,
        started="2026-12-21T08:00:00Z",
        model_id="gpt-5.4-mini",
        provider="openai",
    )
    return runs


def _pages(runs):
    return cards.generated_pages(pages.environment(), records.load_publication(runs))


def test_a_packaged_model_s_card_says_where_its_weights_come_from_and_what_they_are(fab):
    got = _pages(fab)
    for name, entry in _packaged.MODELS.items():
        text = plain(got[f"models/{name}/index.md"])
        for value in (
            entry["sha256"],
            entry["file"],
            entry["package"]["name"],
            entry["package"]["version"],
            entry["package"]["wheel_sha256"],
            entry["licence"],
            entry["quantisation"],
            entry["upstream"],
        ):
            assert value in text, (name, value)
        assert ("base model" in text) == entry["tuning"].startswith("base")
        if entry["chat_template"]:  # fundbook's own template: named, hashed and shown in full
            data = (REPO / "launchers" / "templates" / entry["chat_template"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() in text and data.decode() in text
            for _, part in entry["parts"]:
                assert part in text
        else:
            assert "the GGUF's own tokenizer.chat_template" in text


def test_every_attempt_that_ran_the_weights_is_on_its_card_and_no_other(fab):
    got = _pages(fab)
    recs = {p.parent.name: json.loads(p.read_text())["content"] for p in (fab / "attempts").glob("*/record.json")}
    by = {}
    for aid, c in recs.items():
        if c["model"]["provider"] != "mock":
            by.setdefault(weights.identity(c)["weights"], set()).add(aid)
    found = cards.cards(records.load_publication(fab))
    assert {c["weights"] for c in found} == set(by) | {e["sha256"] for e in _packaged.MODELS.values()}
    for card in found:
        page = got[f"models/{card['slug']}/index.md"]
        listed = {line.split('"')[1] for line in page.splitlines() if line.startswith('<tr data-attempt="')}
        assert listed == by.get(card["weights"], set()), card["slug"]
    hosted = next(c for c in found if c["weights"] == "openai:gpt-5.4-mini")
    text = plain(got[f"models/{hosted['slug']}/index.md"])
    assert hosted["hosted"] and "a hosted model, known by its provider's model id" in text
    assert "Licence, quantisation" in text and "hosted-FUND_01-seed-3" in got[f"models/{hosted['slug']}/index.md"]
    gemma = plain(got["models/gemma3-270m/index.md"])
    assert "llama-cpp:gemma-3-270m-q4_k_m" in gemma  # its row on the board, by its path
    index = got["models/index.md"]
    assert index.count('<tr data-fb-model="') == len(found)


def test_the_published_card_states_the_context_length_and_template_the_records_state():
    pub = records.load_publication(REPO / "runs")
    smol = next(c for c in cards.cards(pub) if c["weights"] == SMOL["sha256"])
    recs = [a.content for a in pub.attempts if weights.identity(a.content)["weights"] == SMOL["sha256"]]
    ctx = {
        v for c in recs for k, v in (c.get("service") or {}).get("gguf", {}).items() if k.endswith(".context_length")
    }
    assert set(smol["context"]["gguf"]) == ctx
    shas = {(c.get("sampling") or {}).get("chat_template_sha256") for c in recs} - {None}
    assert {sha for sha, _, _ in smol["templates"]} == shas
    # the study's decisions: their sweep ran a model arm on these weights
    study = REPO / "runs" / "studies" / "smollm2-heldout"
    if (study / "study.json").is_file():
        names = json.loads((study / "study.json").read_text())["comparisons"]
        assert {d[0] for d in smol["decisions"]} >= {n for n in names if (study / n / "decision.json").is_file()}
    text = plain(cards.generated_pages(pages.environment(), pub)["models/smollm2-135m-instruct/index.md"])
    for value in ctx:
        assert f"{int(value):,} tokens, as the GGUF's metadata states it" in text
    assert GEMMA["title"] in plain(cards.generated_pages(pages.environment(), pub)["models/index.md"])


def test_a_card_s_folder_never_carries_a_record_s_text_and_a_clash_is_refused(fab, tmp_path, monkeypatch):
    hosted = "openai:https://evil.example/<x>"
    assert weights.slug(hosted) == hashlib.sha256(hosted.encode()).hexdigest()[:12]
    assert weights.slug(SMOL["sha256"]) == SMOL["sha256"][:12]
    runs = Path(shutil.copytree(fab, tmp_path / "runs"))
    attempt(runs, "hosted-2", seed=4, points=10, started="2026-12-22T08:00:00Z", model_id="other", provider="openai")
    monkeypatch.setattr(weights, "slug", lambda w: "same")  # two sets of weights named alike
    with pytest.raises(records.SiteInputError, match=r"^model cards: two sets of weights share a card folder"):
        cards.cards(records.load_publication(runs))
