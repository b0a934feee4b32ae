"""Every model attempt verifies in the reader's browser: on its transcript page,
"Verify this attempt in your browser" re-executes the accepted batches of its
receipts through the compiled bundle in Pyodide and checks the receipts, the
receipts head, the grade and every figure the page shows.

On the strictly built site: a local model's completed attempt and an attempt
that ended without a result (world 20's recovered try) match (the long sibling
adds the mock's).
On a tampered copy (one forger's edit per attempt, content re-hashed where the
record is edited): a page figure, the receipts head, a batch in receipts.json
(with the record naming the new file's sha256) and the grade are each named."""

import hashlib
import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

import engine
from builders.site.serve import Serving
from tests.desk.conftest import LOAD_TIMEOUT_MS
from tests.desk.test_verify import check, vcontext, vpage  # noqa: F401  (fixtures: a fresh, offline profile)
from tests.site.conftest import built_site  # noqa: F401  (the shared strict site build)

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("verify")]
REPO = Path(__file__).resolve().parents[2]


def _attempts():
    """(a local model's completed attempt, the mock's, an attempt without a result) of the published runs."""
    root = REPO / "runs" / "attempts"
    found = {}
    for folder in sorted(
        p for p in root.iterdir() if (p / "record.json").is_file() and (p / "transcript.json").is_file()
    ):
        c = json.loads((folder / "record.json").read_text())["content"]
        kind = (
            "inspect"
            if c.get("harness") == "inspect"
            else "mock"
            if c["model"]["id"] == "mock"
            else "completed"
            if c.get("result")
            else "unfinished"
            if c["receipts_head"]["size"]
            else None
        )
        if kind and kind not in found and (c.get("outputs") or {}).get("receipts"):
            found[kind] = folder.name
    return found


ATTEMPTS = _attempts()
needs_attempts = pytest.mark.skipif(
    len({"completed", "mock", "unfinished"} & set(ATTEMPTS)) < 3, reason="needs the published attempts (runs/attempts)"
)
needs_inspect = pytest.mark.skipif("inspect" not in ATTEMPTS, reason="needs a published Inspect attempt")
MIN_FIGURES = {"unfinished": 5, "inspect": 6}  # an Inspect page: moves, the receipts head and the grade


def verify(page, url, attempt):
    page.goto(f"{url}attempts/{attempt}/")
    box = page.locator(".fb-verify-attempt")
    started = time.monotonic()
    box.get_by_role("button", name="Verify this attempt in your browser").click()
    box.locator("[data-result]").wait_for(state="attached", timeout=LOAD_TIMEOUT_MS)
    box.seconds = time.monotonic() - started  # click to verdict: the engine's start in this page included
    return box


def _verifies(vpage, built_site, kinds):  # noqa: F811
    times = {}
    with Serving(built_site[0]) as url:
        for kind in kinds:
            attempt = ATTEMPTS[kind]
            box = verify(vpage, url, attempt)
            assert box.locator("[data-result]").get_attribute("data-result") == "match", (kind, box.inner_text())
            for name in ("files", "reexecution", "engine", "page"):
                assert check(box, name) == (True, []), (kind, name)
            assert int(re.search(r"all (\d+) marked figures", box.inner_text()).group(1)) >= MIN_FIGURES.get(kind, 8)
            times[kind] = (int(box.locator(".fb-verify-output").get_attribute("data-ms")), round(box.seconds, 1))
    print(f"\nattempt verify, (re-execution and checks in ms, click to verdict in s with the engine's start): {times}")
    assert not vpage.errors


@needs_attempts
def test_a_local_models_attempt_and_one_without_a_result_verify_in_the_browser(vpage, built_site):  # noqa: F811
    _verifies(vpage, built_site, ("completed", "unfinished"))


@needs_attempts
@pytest.mark.long
def test_every_kind_of_model_attempt_verifies_in_the_browser(vpage, built_site):  # noqa: F811
    _verifies(vpage, built_site, ("completed", "mock", "unfinished"))


@needs_inspect
def test_an_inspect_imported_attempt_verifies_in_the_browser(vpage, built_site):  # noqa: F811
    """Its receipts.json ({schema, run_id, receipts_head, receipts}) re-executed and finalised by the bundle give
    the file itself, the record's grade, receipts head and count of accepted batches, and every figure shown."""
    _verifies(vpage, built_site, ("inspect",))


def _copy(public: Path, dst: Path) -> Path:
    shutil.copytree(public, dst, copy_function=os.link)
    return dst


def _rewrite(path: Path, data: bytes):
    path.unlink()  # break the hard link: the built site stays as built
    path.write_bytes(data)


def _folder(site, attempt):
    return site / "runs" / "attempts" / attempt


def _record(site, attempt):
    return json.loads((_folder(site, attempt) / "record.json").read_text())


def _write_record(site, attempt, record):
    record["content_sha256"] = engine.content_sha256(record["content"])
    _rewrite(_folder(site, attempt) / "record.json", engine.pretty_json(record).encode())


def page_figure(site, attempt):
    path = site / "attempts" / attempt / "index.html"
    html = path.read_text(encoding="utf-8")
    new = re.sub(
        r'(data-fb-path="content/settled_days">)(\d+)<', lambda m: f"{m.group(1)}{int(m.group(2)) + 1}<", html, count=1
    )
    assert new != html
    _rewrite(path, new.encode())
    return "page: content.settled_days"


def page_score(site, attempt):
    """The grade shown on the page (an Inspect attempt's page has no settled-days figure): 11/100 -> 12/100."""
    path = site / "attempts" / attempt / "index.html"
    html = path.read_text(encoding="utf-8")
    new = re.sub(
        r'(data-fb-path="content/result/score" data-fb-format="score">)(\d+)/100<',
        lambda m: f"{m.group(1)}{int(m.group(2)) + 1}/100<",
        html,
        count=1,
    )
    assert new != html
    _rewrite(path, new.encode())
    return "page: content.result.score"


def receipts_file_head(site, attempt):
    """An Inspect attempt's receipts.json names another head (the file re-hashed into the record)."""
    path = _folder(site, attempt) / "receipts.json"
    doc = json.loads(path.read_text())
    doc["receipts_head"]["hash"] = "0" * 64
    data = engine.pretty_json(doc).encode()
    _rewrite(path, data)
    record = _record(site, attempt)
    record["content"]["outputs"]["receipts"]["sha256"] = hashlib.sha256(data).hexdigest()
    _write_record(site, attempt, record)
    return "receipts.json.receipts_head"


def receipts_head(site, attempt):
    record = _record(site, attempt)
    record["content"]["receipts_head"]["hash"] = "0" * 64
    _write_record(site, attempt, record)
    return "content.receipts_head.hash"


def batch(site, attempt):
    """A forged batch: the first accepted batch's report cash changed, receipts.json re-hashed into the record."""
    path = _folder(site, attempt) / "receipts.json"
    receipts = json.loads(path.read_text())
    first = next(r for r in receipts if r["kind"] == "BATCH")
    first["payload"]["batch"]["report"]["cash"] += 100
    data = engine.pretty_json(receipts).encode()
    _rewrite(path, data)
    record = _record(site, attempt)
    record["content"]["outputs"]["receipts"]["sha256"] = hashlib.sha256(data).hexdigest()
    _write_record(site, attempt, record)
    return "receipts.json"


def grade(site, attempt):
    record = _record(site, attempt)
    record["content"]["result"]["score"]["points"] += 1
    _write_record(site, attempt, record)
    return "content.result.score.points"


@needs_inspect
@pytest.mark.parametrize(
    "tamper, check_name",
    [
        (page_score, "page"),
        (receipts_head, "reexecution"),
        (receipts_file_head, "reexecution"),
    ],
)
def test_a_tampered_inspect_attempt_is_named(vpage, built_site, tmp_path, tamper, check_name):  # noqa: F811
    site = _copy(built_site[0], tmp_path / "site")
    field = tamper(site, ATTEMPTS["inspect"])
    with Serving(site) as url:
        box = verify(vpage, url, ATTEMPTS["inspect"])
        assert box.locator("[data-result]").get_attribute("data-result") == "mismatch", box.inner_text()
        ok, rows = check(box, check_name)
        assert not ok and any(r[0].startswith(field) for r in rows), (field, rows)


@needs_attempts
@pytest.mark.parametrize(
    "tamper, kind, check_name",
    [
        (page_figure, "completed", "page"),
        (receipts_head, "unfinished", "reexecution"),
        (batch, "mock", "reexecution"),
        (grade, "completed", "reexecution"),
    ],
)
def test_a_tampered_attempt_is_named(vpage, built_site, tmp_path, tamper, kind, check_name):  # noqa: F811
    site = _copy(built_site[0], tmp_path / "site")
    field = tamper(site, ATTEMPTS[kind])
    with Serving(site) as url:
        box = verify(vpage, url, ATTEMPTS[kind])
        assert box.locator("[data-result]").get_attribute("data-result") == "mismatch", box.inner_text()
        ok, rows = check(box, check_name)
        assert not ok and any(r[0].startswith(field) for r in rows), (field, rows)
