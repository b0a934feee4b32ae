"""Record fields cannot script the site.

The hostile publication (tests/site/hostile.py) puts each payload of the
corpus into every string field of every record kind a page renders -- run
records, the index, receipts and trace files, attempt records, transcripts --
and is built with `mkdocs --strict`. In Chromium: no payload runs (the
sentinel stays unset, no CSP violation is even reported, no injected element
or attribute exists), and the text shows literally, figure by figure. Fields
a page takes structure from (ids, paths, hashes) refuse hostile values with a
one-line error instead."""

import json
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import engine
from builders.site import escape, fmt, pages, records
from tests.site import hostile
from tests.site.audit import AUDIT, RECORD_VIOLATIONS

REPO = Path(__file__).resolve().parents[2]


# ---- what the corpus covers ----


def _kinds(runs: Path) -> dict:
    """{record kind: [(document, skip patterns)]} of the hostile publication."""
    out = {"run record": [], "receipts file": [], "trace file": [], "index": [], "attempt record": [], "transcript": []}
    for i in range(len(hostile.PAYLOADS)):
        out["run record"].append(
            (json.loads((runs / f"hostile-p{i:02d}.json").read_text()), hostile.STRUCTURAL["run record"])
        )
        out["receipts file"].append((json.loads((runs / "receipts" / f"hostile-p{i:02d}.json").read_text()), []))
        out["trace file"].append((json.loads((runs / "traces" / f"hostile-p{i:02d}.json").read_text()), []))
        folder = runs / "attempts" / f"hostile-a{i:02d}"
        out["attempt record"].append(
            (json.loads((folder / "record.json").read_text()), hostile.STRUCTURAL["attempt record"])
        )
        out["transcript"].append((json.loads((folder / "transcript.json").read_text()), []))
        base = hostile.inspect_base(REPO / "runs")
        if base is not None:  # an Inspect attempt: its transcript, and the values its record keeps as logged
            folder = runs / "attempts" / hostile.inspect_id(base.name, i)
            out.setdefault("inspect transcript", []).append(
                (json.loads((folder / "transcript.json").read_text()), hostile.INSPECT_STRUCTURAL)
            )
            ins = json.loads((folder / "record.json").read_text())["content"]["inspect"]
            out.setdefault("inspect logged values", []).append(
                ({k: ins[k] for k in ("task_args", "generate_config", "limit")}, ["task_args.protocol"])
            )
    return out


def test_every_string_field_of_every_record_kind_holds_its_payload(hostile_site):
    runs = hostile_site[1]
    coverage = {}
    for kind, docs in _kinds(runs).items():
        for i, (doc, skip) in enumerate(docs):
            payload = hostile.PAYLOADS[i]
            fields = hostile.string_paths(doc, skip)
            for path in fields:
                value = doc
                for part in path:
                    value = value[part]
                hashed = (kind in ("run record", "attempt record") and path[0] == "content") or kind.startswith(
                    "inspect"
                )
                assert value == (hostile.hashable(payload) if hashed else payload), (kind, i, path)
            coverage[kind] = len(fields)
    index = json.loads((runs / "index.json").read_text())
    hostile_entries = [e for e in index["entries"] if e["run_id"].startswith("hostile-")]
    assert len(hostile_entries) == len(hostile.PAYLOADS)
    for i, entry in enumerate(hostile_entries):
        for key in ("kind", "fixture_id", "fixture_sha256"):
            assert entry[key] == hostile.hashable(hostile.PAYLOADS[i])
    coverage["index"] = (
        3 + len(hostile.string_paths(index.get("engine") or {})) + len(hostile.string_paths(index["volatile"]))
    )
    total = sum(coverage.values())
    print(
        f"\ncorpus: {len(hostile.PAYLOADS)} payloads x string fields per record kind {coverage} "
        f"= {len(hostile.PAYLOADS) * total} placements"
    )
    assert min(coverage.values()) >= 7 and coverage["run record"] > 50 and coverage["transcript"] > 300


# ---- in the browser ----


def _resolve_attr(roots, attr):
    value = roots
    for part in (unquote(p) for p in attr.split("/")):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


@pytest.fixture(scope="module")
def hostile_pub(hostile_site):
    return records.load_publication(hostile_site[1])


def _expected_figures(pub, run_id):
    run = next(r for r in pub.runs if r.run_id == run_id)
    roots = pages.run_roots(run, pub, pages._receipts(pub.runs_dir, run.content))
    return lambda attr, format: escape.visible(fmt.figure_text(_resolve_attr(roots, attr), format))


def _pages(public: Path):
    rels = ["", "runs/", "attempts/", "limitations/", "404.html"]
    rels += sorted(
        f"runs/{p.name}/" for p in (public / "runs").iterdir() if p.name.startswith("hostile-p") and p.is_dir()
    )
    rels += sorted(f"attempts/{p.name}/" for p in (public / "attempts").iterdir() if p.name.startswith("hostile-a"))
    rels += sorted(
        f"attempts/{p.name}/" for p in (public / "attempts").iterdir() if _hostile_inspect_index(p.name) is not None
    )
    return rels


def _hostile_inspect_index(name):
    """i of a hostile Inspect copy inspect-<model>-<world>-<i as 8 hex> (None for anything else)."""
    base = hostile.inspect_base(REPO / "runs")
    if base is None or not name.startswith(base.name.rsplit("-", 1)[0] + "-") or name == base.name:
        return None
    i = int(name.rsplit("-", 1)[1], 16)
    return i if i < len(hostile.PAYLOADS) and hostile.inspect_id(base.name, i) == name else None


# A frame, then a task: after it, the tasks queued before it -- the details' toggle events -- have run.
SETTLE = "() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)))"

FIGURES = """() => [...document.querySelectorAll('[data-fb-path]')].map((e) =>
    [e.dataset.fbPath, e.dataset.fbFormat || 'text', e.textContent,
     e.dataset.fbRun || e.closest('[data-run-id]')?.dataset.runId || null])"""


def _sample(rels):
    """The walk's fast sibling: the pages every payload reaches (the top pages, whose register lists every
    hostile run) and the run and attempt pages of the first and the last payload."""
    hostile_pages = [
        r
        for r in rels
        if "/hostile-" in r
        or (r.startswith("attempts/inspect-") and _hostile_inspect_index(r.split("/")[1]) is not None)
    ]
    ends = {
        f"{kind}/hostile-{letter}{i:02d}/"
        for kind, letter in (("runs", "p"), ("attempts", "a"))
        for i in (0, len(hostile.PAYLOADS) - 1)
    }
    base = hostile.inspect_base(REPO / "runs")
    if base is not None:
        ends |= {f"attempts/{hostile.inspect_id(base.name, i)}/" for i in (0, len(hostile.PAYLOADS) - 1)}
    return [r for r in rels if r not in hostile_pages or r in ends]


@pytest.mark.browser
@pytest.mark.xdist_group("site")
@pytest.mark.parametrize("walk", ["first-and-last-payload", pytest.param("every-page", marks=pytest.mark.long)])
def test_no_payload_runs_and_every_text_shows_literally(browser, hostile_server, hostile_site, hostile_pub, walk):
    context = browser.new_context()
    context.add_init_script(RECORD_VIOLATIONS)
    origin = urlsplit(hostile_server).netloc
    remote, dialogs = [], []
    context.on(
        "request",
        lambda r: (
            remote.append(r.url)
            if urlsplit(r.url).scheme not in ("data", "blob") and urlsplit(r.url).netloc != origin
            else None
        ),
    )
    page = context.new_page()
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    checked = inspect_pages = 0
    walked = _pages(hostile_site[0]) if walk == "every-page" else _sample(_pages(hostile_site[0]))
    for rel in walked:
        page.goto(hostile_server + rel)
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        page.evaluate(SETTLE)  # the toggle events opening queued (and any handler they could run) have run
        out = page.evaluate(AUDIT)
        assert out["pwned"] is None, (rel, out["pwned"])
        assert not out["bad"], (rel, out["bad"][:5])
        assert not out["violations"], (rel, out["violations"][:5])
        assert len(out["descriptions"]) == 1, (rel, out["descriptions"])
        article = page.locator("article").first.text_content() if rel != "404.html" else ""
        if rel == "runs/":  # every row's figures, hostile runs and all
            for attr, format, shown, run in page.evaluate(FIGURES):
                if run is not None:
                    assert shown == _expected_figures(hostile_pub, run)(attr, format), (run, attr)
                    checked += 1
        if rel.startswith("runs/hostile-p"):
            i = int(rel[len("runs/hostile-p") : -1])
            payload = escape.visible(hostile.hashable(hostile.PAYLOADS[i]))
            assert out["descriptions"][0].startswith(f"{payload} run hostile-p{i:02d}: {payload}, {payload}, ")
            expected = _expected_figures(hostile_pub, f"hostile-p{i:02d}")
            figures = page.evaluate(FIGURES)
            assert len(figures) > 300
            for attr, format, shown, run in figures:
                assert run is None
                assert shown == expected(attr, format), (rel, attr)
                checked += 1
            # the trace (not a figure) is shown as its JSON text, lone surrogates and all
            assert escape.visible(json.dumps(hostile.PAYLOADS[i], ensure_ascii=False)[1:-1]) in article
        if rel.startswith("attempts/hostile-a"):
            i = int(rel[len("attempts/hostile-a") : -1])
            payload = escape.visible(hostile.hashable(hostile.PAYLOADS[i]))
            assert out["descriptions"][0] == f"Transcript of model attempt hostile-a{i:02d}: {payload}, {payload}."
            assert article.count(escape.visible(hostile.PAYLOADS[i])) >= 10, rel  # every step's text and tools
        if rel.startswith("attempts/inspect-"):  # every message, its tool calls and the values kept as logged
            i = _hostile_inspect_index(rel.split("/")[1])
            text = escape.visible(hostile.hashable(hostile.PAYLOADS[i]))
            assert article.count(text) >= 10, (rel, article.count(text))
            inspect_pages += 1
    assert checked > (5000 if walk == "every-page" else 600)
    if hostile.inspect_base(REPO / "runs"):  # the Inspect attempt's copies: all, or the first and last payload's
        assert inspect_pages == (len(hostile.PAYLOADS) if walk == "every-page" else 2)
    assert not dialogs and not remote, (dialogs, remote[:5])
    print(f"\nhostile site: {len(walked)} pages audited, {checked} figures shown literally")
    context.close()


@pytest.mark.browser
@pytest.mark.xdist_group("site")
def test_searching_the_hostile_site_runs_nothing(browser, hostile_server):
    context = browser.new_context()
    context.add_init_script(RECORD_VIOLATIONS)
    page = context.new_page()
    page.goto(hostile_server)
    search = page.locator("input.md-search__input")
    search.click()
    page.wait_for_function(
        """() => !document.querySelector('.md-search-result__meta')
        .textContent.includes('Initializing')""",
        timeout=30_000,
    )
    for query in ("onerror", "window", "script"):
        search.fill("")
        search.press_sequentially(query, delay=20)  # the theme searches on key input
        page.locator(".md-search-result__item").first.wait_for(state="attached", timeout=30_000)
        out = page.evaluate(AUDIT)
        assert out["pwned"] is None and not out["bad"] and not out["violations"], (query, out)
        if query == "onerror":  # the register's hostile text, shown as text
            assert "evil.example" in page.locator(".md-search-result").text_content()
    context.close()


@pytest.mark.browser
@pytest.mark.xdist_group("site")
def test_verify_on_a_hostile_run_shows_text_and_runs_nothing(browser, hostile_server):
    context = browser.new_context()
    context.add_init_script(RECORD_VIOLATIONS)
    page = context.new_page()
    page.goto(hostile_server + "runs/hostile-p00/")
    page.get_by_role("button", name="Verify this run in your browser").click()
    result = page.locator(".fb-verify [data-result]")
    result.wait_for(state="attached", timeout=120_000)
    assert result.get_attribute("data-result") in ("error", "mismatch")
    assert hostile.PAYLOADS[0] in page.locator(".fb-verify").text_content()
    out = page.evaluate(AUDIT)
    assert out["pwned"] is None and not out["bad"] and not out["violations"], out
    context.close()


# ---- structural fields refuse hostile values ----


@pytest.fixture
def one_run(tmp_path):
    """A publication with the base run and the mock attempt only."""
    src = REPO / "runs"
    if not (src / "index.json").is_file():
        pytest.skip("needs the published runs/ (make build-runs)")
    return hostile.publication(src, tmp_path / "runs", payloads=[])


def _seal(runs: Path, record_path: Path, record: dict, rehash=True):
    if rehash:
        record["content_sha256"] = engine.content_sha256(record["content"])
    hostile._dump(record_path, record)
    index = json.loads((runs / "index.json").read_text())
    for entry in index["entries"]:
        if entry["record"] == f"runs/{record_path.name}":
            entry["file_sha256"] = records.file_sha256(record_path)
            entry["content_sha256"] = record["content_sha256"]
    hostile._dump(runs / "index.json", hostile.reseal_index(index))


def _refusal(runs: Path) -> str:
    with pytest.raises(records.SiteInputError) as err:
        pages.generated_pages(records.load_publication(runs))
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message
    return message


HOSTILE = [hostile.PAYLOADS[0], "../../../etc/passwd", "runs/../../etc/passwd", "javascript:alert(1)"]


@pytest.mark.parametrize("payload", HOSTILE)
@pytest.mark.parametrize(
    "field, message",
    [
        ("content.run_id", "field `content.run_id` expected"),
        ("content.outputs.trace.path", "outputs.trace.path: expected a path runs/<name>"),
        ("content.outputs.receipts.path", "outputs.receipts.path: expected a path runs/<name>"),
        ("schema", "field `schema` expected 'fundbook.run/1'"),
    ],
)
def test_structural_run_record_fields_refuse_hostile_values(one_run, field, message, payload):
    path = one_run / f"{hostile.BASE_RUN}.json"
    record = json.loads(path.read_text())
    target, *keys = field.split(".")
    node = record
    for key in [target, *keys][:-1]:
        node = node[key]
    node[([target, *keys])[-1]] = payload
    _seal(one_run, path, record)
    assert message in _refusal(one_run)


@pytest.mark.parametrize("payload", HOSTILE)
@pytest.mark.parametrize(
    "field, message",
    [
        ("run_id", "run_id: expected an id"),
        ("record", "record: expected a path runs/<name>"),
        ("content_sha256", "field `content_sha256` differs from runs/index.json entries[0]"),
        ("file_sha256", "file sha256 differs from runs/index.json entries[0].file_sha256"),
    ],
)
def test_structural_index_fields_refuse_hostile_values(one_run, field, message, payload):
    index = json.loads((one_run / "index.json").read_text())
    index["entries"][0][field] = payload
    hostile._dump(one_run / "index.json", hostile.reseal_index(index))
    assert message in _refusal(one_run)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda i: i["entries"][0].update(prev_hash=hostile.PAYLOADS[0]), "the hash chain breaks at"),
        (lambda i: i["entries"][0].update(hash=hostile.PAYLOADS[0]), "field `head` expected the size and hash"),
        (lambda i: i["head"].update(hash=hostile.PAYLOADS[0]), "field `head` expected the size and hash"),
        (lambda i: i.update(head=hostile.PAYLOADS[0]), "field `head` expected the size and hash"),
        (lambda i: i.update(entries=hostile.PAYLOADS[0]), "field `entries` expected list"),
    ],
)
def test_index_chain_fields_refuse_hostile_values(one_run, edit, message):
    index = json.loads((one_run / "index.json").read_text())
    edit(index)
    hostile._dump(one_run / "index.json", index)
    assert message in _refusal(one_run)


@pytest.mark.parametrize(
    "field, message",
    [
        ("attempt_id", "content.attempt_id: expected an id"),
        ("transcript", "transcript.json: sha256 differs from record content.transcript.sha256"),
    ],
)
def test_structural_attempt_fields_refuse_hostile_values(one_run, field, message):
    path = one_run / "attempts" / hostile.BASE_ATTEMPT / "record.json"
    record = json.loads(path.read_text())
    if field == "transcript":
        record["content"]["transcript"]["sha256"] = hostile.PAYLOADS[0]
    else:
        record["content"][field] = hostile.PAYLOADS[0]
    record["content_sha256"] = engine.content_sha256(record["content"])
    hostile._dump(path, record)
    assert message in _refusal(one_run)


def test_hostile_attempt_folder_name_is_refused(one_run):
    shutil.copytree(one_run / "attempts" / hostile.BASE_ATTEMPT, one_run / "attempts" / "evil<script>'")
    assert "expected a folder name of letters" in _refusal(one_run)


@pytest.mark.parametrize("where", ["run", "attempt"])
def test_content_with_a_lone_surrogate_is_refused_in_one_line(one_run, where):
    path = (
        one_run / f"{hostile.BASE_RUN}.json"
        if where == "run"
        else one_run / "attempts" / hostile.BASE_ATTEMPT / "record.json"
    )
    record = json.loads(path.read_text())
    record["content"]["status" if where == "run" else "label"] = "lone \ud800"
    hostile._dump(path, record)  # its content cannot be hashed: the claimed hash stays
    if where == "run":
        _seal(one_run, path, record, rehash=False)
    assert re.search(
        r"field `content` is not canonical JSON \(\$\.\w+: a lone surrogate is not Unicode text\)", _refusal(one_run)
    )


# ---- practitioner records: every field held to the importer's own checks; pages write values as data ----


@pytest.fixture(scope="module")
def practitioner_runs(tmp_path_factory):
    """A runs folder holding two practitioner records the importer's writer made (one abandoned, one completed)."""
    from tests.site.conftest import _engine_dir

    base = tmp_path_factory.mktemp("practitioner")
    runs = base / "runs"
    runs.mkdir()
    (runs / "index.json").write_text(
        json.dumps({"engine": json.loads((REPO / "runs" / "index.json").read_text())["engine"]})
        if (REPO / "runs" / "index.json").is_file()
        else "{}"
    )
    bundle = _engine_dir(base)
    return runs, [hostile.practitioner_record(runs, bundle, finalize=f) for f in (False, True)]


def _practitioner_refusal(runs) -> str:
    from builders.site.practitioner_page import site_files

    with pytest.raises(engine.InputError) as err:
        site_files(runs)
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message and len(message) < 400, message
    return message


def test_practitioner_records_as_imported_build_pages_whose_front_matter_is_the_generators(practitioner_runs):
    from builders.site.practitioner_page import site_files

    runs, folders = practitioner_runs
    built = site_files(runs)
    for folder in folders:
        text = built[f"practitioners/{folder.name}/index.md"]
        assert escape.front_matter_problem(text) is None
        assert text.startswith(f"---\ntitle: Practitioner attempt {folder.name}\n")


def _every_field_refused(practitioner_runs, every_leaf, folders=None):
    """Each leaf of every file of both records (record content and volatile, submission, receipts) in turn holds a
    payload -- the content re-hashed, as a hand-placed record would be -- and the build's check refuses it in one
    line naming the file (and, for the record and the submission, the field). `every_leaf` False: one leaf per
    field (list indices collapsed), the fast sibling."""
    from builders.practitioners import check_published

    runs, every = practitioner_runs
    folders = every if folders is None else folders
    published = json.loads((runs / "index.json").read_text()).get("engine") or {}
    placements = 0
    for folder in folders:
        for name in ("record.json", "submission.json", "receipts.json"):
            original = (folder / name).read_bytes()
            doc = json.loads(original)
            seen = set()
            for n, path in enumerate(hostile.leaf_paths(doc)):
                shape = tuple("*" if isinstance(p, int) else p for p in path)
                if (name == "record.json" and path[0] == "content_sha256") or (not every_leaf and shape in seen):
                    continue  # the seal itself is re-computed below for every change of content
                seen.add(shape)
                payload = hostile.hashable(hostile.PAYLOADS[n % len(hostile.PAYLOADS)])
                changed = json.loads(original)
                hostile.set_path(changed, path, payload)
                if name == "record.json":
                    changed["content_sha256"] = engine.content_sha256(changed["content"])
                (folder / name).write_text(json.dumps(changed, indent=2, ensure_ascii=True))
                try:
                    with pytest.raises(engine.InputError) as err:
                        check_published(str(runs), folder.name, published)
                finally:
                    (folder / name).write_bytes(original)
                message = str(err.value)
                assert "\n" not in message and len(message) < 400, message
                assert message.startswith(f"runs/practitioners/{folder.name}"), (name, path, message)
                if name == "submission.json" and path[0] in (
                    "participant",
                    "cohort",
                    "termination",
                    "clock",
                    "consent",
                ):
                    assert f"{path[0]}" in message, (path, message)
                if name == "record.json" and path[0] == "content":
                    assert "content" in message, (path, message)
                placements += 1
    return placements


def test_a_hostile_value_in_each_field_of_a_practitioner_record_is_refused_in_one_line(practitioner_runs):
    completed = practitioner_runs[1][1:]  # the completed record: every field the abandoned one has, and a result
    placements = _every_field_refused(practitioner_runs, every_leaf=False, folders=completed)
    print(f"\npractitioner record: {placements} fields, each with a payload, each refused in one line")
    assert placements > 100


@pytest.mark.long
def test_a_hostile_value_in_every_leaf_of_a_practitioner_record_is_refused_in_one_line(practitioner_runs):
    placements = _every_field_refused(practitioner_runs, every_leaf=True)
    print(f"\npractitioner records: {placements} hostile placements, each refused in one line")
    assert placements > 1000


@pytest.mark.parametrize(
    "field, value, expected",
    [
        (("content", "task", "instance_id"), 'FUND_01/seed-7" onmouseover="x', "content.task.instance_id"),
        (("content", "termination", "status"), "abandoned\ntemplate: 404.html", "content.termination.status"),
        (("content", "participant"), "p-00112233445566aa<img src=https://evil.example/x>", "content.participant"),
    ],
)
def test_the_issues_hand_placed_practitioner_records_are_refused(practitioner_runs, field, value, expected):
    """The three hand-placed records of issue 31: a quote in the instance id, a newline in termination.status, an
    <img> in a rendered field; each refused at build time, naming the file and the field."""
    runs, (folder, _) = practitioner_runs
    original = (folder / "record.json").read_bytes()
    record = json.loads(original)
    hostile.set_path(record, field, value)
    record["content_sha256"] = engine.content_sha256(record["content"])
    (folder / "record.json").write_text(json.dumps(record))
    try:
        message = _practitioner_refusal(runs)
    finally:
        (folder / "record.json").write_bytes(original)
    assert message.startswith(f"runs/practitioners/{folder.name}/record.json: ") and expected in message, message


@pytest.mark.parametrize("i", range(len(hostile.PAYLOADS)))
def test_a_practitioner_page_writes_every_value_as_data_even_unchecked(practitioner_runs, i):
    """Defence in depth: the page itself, given a record whose every string holds payload i (the checks
    bypassed), writes front matter a YAML writer made (the same two keys, the text intact) and no markup."""
    from builders.site.practitioner_page import page
    from mkdocs.utils import meta

    runs, folders = practitioner_runs
    payload = hostile.PAYLOADS[i]
    for folder in folders:
        record = json.loads((folder / "record.json").read_text())
        record["content"] = hostile.poison(record["content"], payload)
        text = page(payload, record)
        body, data = meta.get_data(text)
        body = body.replace('<script type="module" src="../../assets/desk/verify.js"></script>', "")  # the page's own
        assert set(data) == {"title", "description"} and data["title"] == escape.plain(
            f"Practitioner attempt {payload}"
        )
        assert data["description"] == escape.plain(f"A practitioner run of {payload}: {payload}.")
        assert escape.front_matter_problem(text) is None
        for token in ("<script", "<img", "<svg", "<iframe", "<style", "<meta", "<base", "<form", '<a href="javascript'):
            assert token not in body.lower(), (i, token)
        assert "\n\n<script" not in body and "template:" not in text.split("\n---\n", 1)[0].replace(
            "\\ntemplate:", ""
        ), i


def test_every_generated_page_of_the_hostile_publication_has_the_generators_front_matter(hostile_pub):
    """The build's guard (hooks.on_files) holds on every page every generator makes from the hostile
    publication -- run, attempt, register, comparison pages -- so a new record kind's pages are checked too."""
    generated = pages.generated_pages(hostile_pub)
    checked = 0
    for uri, text in generated.items():
        if uri.endswith(".md"):
            assert escape.front_matter_problem(text) is None, uri
            checked += 1
    assert checked > 2 * len(hostile.PAYLOADS)


@pytest.mark.parametrize(
    "text, problem",
    [
        ('---\ntitle: "Practitioner attempt x"y"\ndescription: d\n---\n\n# x\n', "front matter does not parse"),
        ("---\ntitle: t\ndescription: abandoned\ntemplate: 404.html\n---\n\n# x\n", "front matter sets `template`"),
        ("---\ntitle: t\ndescription: [a, b]\n---\n", "front matter `description` is not one line of text"),
        ("# no front matter\n", "expected a page opening with its front matter"),
    ],
)
def test_the_front_matter_guard_names_what_a_record_value_did(text, problem):
    assert problem in escape.front_matter_problem(text)


def test_the_front_matter_writer_keeps_a_hostile_value_one_scalar():
    from mkdocs.utils import meta

    for payload in hostile.PAYLOADS:
        _, data = meta.get_data(escape.front_matter({"title": payload, "description": payload}) + "\n# x\n")
        assert data == {"title": escape.plain(payload), "description": escape.plain(payload)}
    with pytest.raises(ValueError):
        escape.front_matter({"template": "404.html"})
