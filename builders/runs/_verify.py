"""`make verify`: rebuild the bundle and the runs from this checkout in a
scratch directory (one Pyodide runtime) and check every published byte of
runs/ against the rebuild:

- build inputs: the published provenance's build definition against this
  checkout's (names a differing source, compiler script, Pyodide version or
  SOURCE_DATE_EPOCH, and whether the source has an uncommitted change);
- runs/engine/: manifest.json byte for byte; provenance.json's build part
  exactly (its run details are one build's: volatile);
- index.json: schema, engine block, the chain from its genesis, the head (and
  that head against the published one: --expect-head, or git's HEAD), every
  entry field against the rebuild, durations against the records;
- every record: content field by field against the rebuild (content
  differences), its bytes against the file_sha256 the chain fixes (volatile
  differences), canonical form, schema;
- receipts/, traces/, inputs/, the Parquet exports, schemas/: byte for byte;
- no file that no index entry or record lists. Six parts of runs/ are not
  the build's and have their own check, which `make verify` runs after this
  one: runs/studies/ (`make verify-study`: every world, status.json, the
  decisions, and no file of a study that none of these accounts for),
  runs/attempts/ and its tables attempts.parquet and calls.parquet
  (written by the launchers: `fundbook-launch export --check` verifies every
  record and the tables' bytes), and runs/comparisons/ and runs/certificates/
  (the experiments: `make verify-experiments` recomputes them and compares
  the bytes), and runs/practitioners/ (`fundbook practitioner verify`
  re-executes each record's submission through the bundle), and runs/errata/
  (`make verify-erratum` recomputes the grammar-1 erratum from the attempts
  and the studies, and refuses any other file there).

Each difference is one line naming the file, the field and both values, and
whether it is content, volatile or a build input; the first is the error.
"""

import contextlib
import json
import os
import subprocess

import engine

from .._errors import BuildError
from .._files import ROOT, rel
from .._session import PyodideSession
from ..run_index import INDEX_SCHEMA, check_chain, genesis
from ._inputs import compare_inputs, first_difference, value_at  # noqa: F401 (verify_runs' own API)
from ._schemas import validate

# folders with their own check (above; practitioners: `fundbook practitioner verify`, mk/desk.mk)
OUT_OF_SCOPE = ("attempts", "comparisons", "certificates", "practitioners", "studies", "errata")  # studies: make
# verify-study; errata: make verify-erratum
OUT_OF_SCOPE_FILES = ("attempts.parquet", "calls.parquet")      # the attempts' tables
LIMIT = 20  # differences listed before "and N more"


class Report:
    """Differences in the order found; each is (kind, line)."""

    def __init__(self):
        self.items = []
        self.checked = []

    def add(self, kind, line):
        self.items.append((kind, line))

    def ok(self, line):
        self.checked.append(line)

    def text(self):
        lines = [f"ok      {line}" for line in self.checked]
        lines += [f"{kind:<8}{line}" for kind, line in self.items[:LIMIT]]
        if len(self.items) > LIMIT:
            lines.append(f"... and {len(self.items) - LIMIT} more differences")
        return "\n".join(lines)


def _read(path):
    with open(path, "rb") as fh:
        return fh.read()


def _load(path, report=None, kind="file"):
    try:
        return json.loads(_read(path))
    except (OSError, ValueError) as exc:
        if report is None:
            raise BuildError(f"{rel(path)}: unreadable ({exc})")
        report.add(kind, f"{rel(path)}: unreadable ({exc})")
        return None


# -- the publication --------------------------------------------------------------------------------

def _published_files(directory):
    out = set()
    for dirpath, dirnames, files in os.walk(directory):
        relative = os.path.relpath(dirpath, directory)
        if relative == ".":
            dirnames[:] = [d for d in dirnames if d not in OUT_OF_SCOPE]
            files = [f for f in files if f not in OUT_OF_SCOPE_FILES]
        for name in files:
            out.add(os.path.normpath(os.path.join(relative, name)).replace(os.sep, "/"))
    studies = os.path.join(directory, "studies")  # verify-study checks each study folder, and only those
    for name in sorted(os.listdir(studies)) if os.path.isdir(studies) else []:
        if not os.path.isfile(os.path.join(studies, name, "study.json")):
            out.add(f"studies/{name}")
    return out


def _expected_files(rebuilt_index, rebuilt_dir):
    expected = {"index.json", "register.parquet", "days.parquet", "engine/manifest.json", "engine/provenance.json"}
    expected |= {f"schemas/{n}" for n in os.listdir(os.path.join(rebuilt_dir, "schemas"))}
    for entry in rebuilt_index["entries"]:
        expected.add(entry["record"][len("runs/"):])
        record = _load(os.path.join(rebuilt_dir, entry["record"][len("runs/"):]))
        expected |= {out["path"][len("runs/"):] for out in record["content"]["outputs"].values()}
    return expected


def _well_formed(committed, report, label) -> bool:
    """The index's schema id and shape; the other checks read it."""
    if not isinstance(committed, dict):
        report.add("index", f"{label}: not an index (expected a JSON object)")
        return False
    if committed.get("schema") != INDEX_SCHEMA:
        report.add("index", f"{label}: schema: published {committed.get('schema')!r}, expected {INDEX_SCHEMA!r}")
        return False
    try:
        validate("index", committed, label)
    except BuildError as exc:
        report.add("index", exc.format_message())
        return False
    return True


def _check_index(committed, rebuilt, anchor, report, label, committed_dir):
    ok = True
    where = first_difference(committed.get("engine"), rebuilt["engine"], "engine")
    if where:
        report.add("content", f"{label}: {where}: published {value_at(committed.get('engine'), where, 'engine')}, "
                              f"rebuilt {value_at(rebuilt['engine'], where, 'engine')}")
        ok = False
    broken = check_chain(committed)
    if broken:
        report.add("index", f"{label}: the hash chain breaks at {broken} (genesis {genesis(INDEX_SCHEMA, committed.get('engine'))[:12]}...; "
                            f"entry.hash = sha256(canonical entry without hash))")
        ok = False
    if anchor and committed.get("head", {}).get("hash") != anchor["head"]:
        report.add("index", f"{label}: head {committed.get('head', {}).get('hash')} is not the published head "
                            f"{anchor['head']} ({anchor['source']}){_changed_entry(committed, anchor, committed_dir)}")
        ok = False
    old = {e.get("run_id"): e for e in committed.get("entries", [])}
    new = {e["run_id"]: e for e in rebuilt["entries"]}
    for rid in sorted(set(old) | set(new), key=str):
        if rid not in new:
            report.add("content", f"{label}: entry {rid}: only in the published index (the sources publish no such fixture)")
        elif rid not in old:
            report.add("content", f"{label}: entry {rid}: missing (the sources publish it)")
        else:
            for key in sorted(set(old[rid]) | set(new[rid])):
                if key in ("file_sha256", "prev_hash", "hash"):
                    continue
                if old[rid].get(key) != new[rid].get(key):
                    report.add("content", f"{label}: entries[{rid}].{key}: published {json.dumps(old[rid].get(key))}, "
                                          f"rebuilt {json.dumps(new[rid].get(key))}")
                    ok = False
                    break
    return ok


def _changed_entry(committed, anchor, committed_dir) -> str:
    """Against the published index (when the anchor has it): the first entry
    that changed, and for a changed file, the first changed field in it."""
    published = anchor.get("index")
    if not published:
        return ""
    before = {e.get("run_id"): e for e in published.get("entries", [])}
    for entry in committed.get("entries", []):
        rid = entry.get("run_id")
        old = before.get(rid)
        if old is None:
            return f"; first changed entry: {rid} (not in the published index)"
        for key in ("content_sha256", "file_sha256", "kind", "fixture_id", "fixture_sha256", "record"):
            if old.get(key) != entry.get(key):
                if key == "file_sha256":
                    try:
                        data = _read(os.path.join(committed_dir, f"{rid}.json"))
                    except OSError:
                        data = b""
                    return f"; first changed entry: runs/{rid}.json file_sha256 (volatile part){_volatile_named(rid, data, anchor)}"
                return f"; first changed entry: runs/{rid}.json {key}"
    return ""


def _volatile_named(rid, data, anchor):
    """For a record whose volatile part changed: the first differing field
    against the published copy, when git holds one."""
    original = (anchor or {}).get("files", {}).get(f"{rid}.json") if anchor else None
    if original is None:
        return ""
    try:
        a, b = json.loads(original)["volatile"], json.loads(data)["volatile"]
    except (ValueError, KeyError, TypeError):
        return ""
    where = first_difference(a, b, "volatile")
    return f"; first at {where}: published {value_at(a, where, 'volatile')}, here {value_at(b, where, 'volatile')}" if where else ""


def _check_record(committed_dir, rebuilt_dir, entry, rebuilt_entry, anchor, report):
    rid = entry["run_id"]
    path = os.path.join(committed_dir, f"{rid}.json")
    label = f"runs/{rid}.json"
    try:
        data = _read(path)
    except OSError:
        report.add("missing", f"{label}: missing (listed in the index)")
        return
    try:
        doc = json.loads(data)
    except ValueError as exc:
        report.add("file", f"{label}: not JSON ({exc})")
        return
    rebuilt = _load(os.path.join(rebuilt_dir, f"{rid}.json"))
    content = doc.get("content") if isinstance(doc, dict) else None
    where = first_difference(content, rebuilt["content"], "content")
    if where:
        report.add("content", f"{label}: {where}: published {value_at(content, where)}, rebuilt "
                              f"{value_at(rebuilt['content'], where)} (content_sha256 published "
                              f"{entry.get('content_sha256')}, rebuilt {rebuilt_entry['content_sha256']})")
        return
    if doc.get("content_sha256") != rebuilt["content_sha256"] or doc.get("schema") != rebuilt["schema"]:
        key = "schema" if doc.get("schema") != rebuilt["schema"] else "content_sha256"
        report.add("content", f"{label}: {key}: published {json.dumps(doc.get(key))}, rebuilt {json.dumps(rebuilt[key])}")
        return
    digest = engine.sha256_hex(data)
    if digest != entry.get("file_sha256"):
        report.add("volatile", f"{label}: content matches the rebuild, but the file's sha256 {digest} is not the "
                               f"{entry.get('file_sha256')} the index chain fixes: its volatile part changed"
                               f"{_volatile_named(rid, data, anchor)}")
        return
    if engine.pretty_json(doc).encode() != data:
        report.add("volatile", f"{label}: not in the published form (engine.pretty_json), though its hash is chained")
        return
    try:
        validate("run", doc, label)
    except BuildError as exc:
        report.add("volatile", exc.format_message())


def _check_bytes(committed_dir, rebuilt_dir, relpath, report, kind="content"):
    """A file the build writes deterministically: byte for byte."""
    label = f"runs/{relpath}"
    try:
        mine = _read(os.path.join(committed_dir, relpath))
    except OSError:
        report.add("missing", f"{label}: missing (the build writes it)")
        return False
    theirs = _read(os.path.join(rebuilt_dir, relpath))
    if mine == theirs:
        return True
    detail = ""
    if relpath.endswith(".json"):
        try:
            a, b = json.loads(mine), json.loads(theirs)
            where = first_difference(a, b, "$")
            detail = f": {where}: published {value_at(a, where, '$')}, rebuilt {value_at(b, where, '$')}" if where \
                else ": same JSON, different bytes"
        except ValueError:
            detail = ": not JSON"
    elif relpath.endswith(".parquet"):
        detail = _parquet_detail(os.path.join(committed_dir, relpath), os.path.join(rebuilt_dir, relpath))
    report.add(kind, f"{label}: sha256 published {engine.sha256_hex(mine)}, rebuilt {engine.sha256_hex(theirs)}{detail}")
    return False


def _parquet_detail(mine, theirs):
    import pyarrow.parquet as pq
    try:
        a, b = pq.ParquetFile(mine), pq.ParquetFile(theirs)
    except Exception as exc:  # a damaged file: its reader's message says how
        return f" (unreadable: {exc})"
    if a.metadata.created_by != b.metadata.created_by:
        return f" (writer: published {a.metadata.created_by!r}, this build {b.metadata.created_by!r}: a different pyarrow)"
    ra, rb = a.read().to_pylist(), b.read().to_pylist()
    where = first_difference(ra, rb, "rows")
    return f": {where}" if where else " (same rows, different encoding)"


def _check_provenance(committed_dir, rebuilt_dir, report):
    label = "runs/engine/provenance.json"
    doc = _load(os.path.join(committed_dir, "engine", "provenance.json"), report)
    if doc is None:
        return
    rebuilt = _load(os.path.join(rebuilt_dir, "engine", "provenance.json"))
    try:
        validate("provenance", doc, label)
    except BuildError as exc:
        report.add("file", exc.format_message())
    compare_inputs(doc, rebuilt, report, label)


def published_anchor(committed_dir, expect_head=None, root=ROOT):
    """The head runs/ must hold: --expect-head, or git's HEAD:runs/index.json
    (with HEAD's record files, to name a changed volatile field) when
    committed_dir is this checkout's runs/. None when there is neither."""
    if expect_head:
        return {"head": expect_head, "source": "--expect-head", "index": None, "files": {}}
    if os.path.abspath(committed_dir) != os.path.join(root, "runs"):
        return None

    def show(path):
        proc = subprocess.run(["git", "show", f"HEAD:runs/{path}"], cwd=root, capture_output=True)
        return proc.stdout if proc.returncode == 0 else None

    try:
        index = show("index.json")
    except OSError:
        return None
    if index is None:
        return None
    try:
        index = json.loads(index)
        head = index["head"]["hash"]
    except (ValueError, KeyError, TypeError):
        return None

    class _Lazy(dict):
        def get(self, key, default=None):
            if key not in self:
                self[key] = show(key)
            return dict.get(self, key, default)

    return {"head": head, "source": "git HEAD:runs/index.json", "index": index, "files": _Lazy()}


def compare(committed_dir, rebuilt_dir, anchor=None) -> Report:
    """Every published byte of committed_dir against the rebuild in rebuilt_dir."""
    report = Report()
    label = "runs/index.json"
    committed = _load(os.path.join(committed_dir, "index.json"), report, "missing")
    rebuilt = _load(os.path.join(rebuilt_dir, "index.json"))
    _check_provenance(committed_dir, rebuilt_dir, report)
    if _check_bytes(committed_dir, rebuilt_dir, "engine/manifest.json", report):
        report.ok("runs/engine/manifest.json: byte for byte")
    if committed is None:
        return report
    before = len(report.items)
    if not _well_formed(committed, report, label):
        return report  # everything below reads the index
    _check_index(committed, rebuilt, anchor, report, label, committed_dir)
    new = {e["run_id"]: e for e in rebuilt["entries"]}
    for entry in committed.get("entries", []):
        if entry.get("run_id") in new:
            _check_record(committed_dir, rebuilt_dir, entry, new[entry["run_id"]], anchor, report)
    durations = {}
    for entry in committed.get("entries", []):
        try:
            durations[entry["run_id"]] = _load(os.path.join(committed_dir, f"{entry['run_id']}.json"))["volatile"]["duration_ms"]
        except (BuildError, KeyError, TypeError):
            pass
    if (committed.get("volatile") or {}).get("durations_ms") != dict(sorted(durations.items())):
        report.add("volatile", f"{label}: volatile.durations_ms is not each record's volatile.duration_ms")
    if len(report.items) == before:
        anchored = f", the published head ({anchor['source']})" if anchor else ""
        report.ok(f"{label}: schema, engine block, {len(committed['entries'])} entries and records, chain from genesis "
                  f"to head {committed['head']['hash']}{anchored}")
    expected = _expected_files(rebuilt, rebuilt_dir)
    present = _published_files(committed_dir)
    before = len(report.items)
    for relpath in sorted(expected - {"index.json", "engine/manifest.json", "engine/provenance.json"}):
        if relpath.endswith(".json") and "/" not in relpath:
            continue  # records: checked above
        _check_bytes(committed_dir, rebuilt_dir, relpath, report)
    for relpath in sorted(present - expected):
        report.add("unlisted", f"runs/{relpath}: not part of the publication (no index entry or record lists it)")
    if len(report.items) == before:
        report.ok(f"runs/: {len(expected)} files, each listed and byte for byte; nothing unlisted "
                  f"(attempts, comparisons and certificates are checked next)")
    return report


def verify_runs(committed_dir, scratch, expect_head=None, session=None) -> str:
    """Rebuild into `scratch` (one runtime) and compare; VerifyFailed on any difference."""
    from ..bundle import build_engine
    from ._stage import build_runs
    if not os.path.isfile(os.path.join(committed_dir, "index.json")):
        raise BuildError(f"{rel(os.path.join(committed_dir, 'index.json'))}: missing "
                         f"(run `make build-runs` and commit runs/)")
    engine_dir, runs_dir = os.path.join(scratch, "engine"), os.path.join(scratch, "runs")
    with contextlib.nullcontext(session) if session else PyodideSession() as runtime:
        build_engine(engine_dir, session=runtime)
        try:
            build_runs(engine_dir, runs_dir, parity=True, session=runtime, volatile="fresh")
        except BuildError as exc:  # the rebuild itself stopped: say which input moved, if one did
            inputs = Report()
            published = os.path.join(committed_dir, "engine", "provenance.json")
            if os.path.isfile(published) and _load(published, inputs) is not None:
                compare_inputs(_load(published), _load(os.path.join(engine_dir, "provenance.json")), inputs)
            why = f" [build input: {inputs.items[0][1]}]" if inputs.items else ""
            raise BuildError(f"{exc.format_message()}{why}") from None
    report = compare(committed_dir, runs_dir, published_anchor(committed_dir, expect_head))
    if report.items:
        kind, first = report.items[0]
        counts = {}
        for k, _ in report.items:
            counts[k] = counts.get(k, 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in counts.items())
        raise VerifyFailed(f"{first} [{kind}; in all: {summary}]", report.text())
    return report.text() + f"\nverify: runs/ is exactly what this checkout builds ({len(report.checked)} checks)"


class VerifyFailed(BuildError):
    """A failed verify: the first difference is the error line; the whole
    report goes to stdout first."""

    def __init__(self, message, report_text):
        super().__init__(message)
        self.report_text = report_text

    def show(self, file=None):
        import click
        click.echo(self.report_text)
        super().show(file)
