"""A page for each practitioner record (runs/practitioners/<id>/), with its
"verify in your browser" box: the minimal renderer the site uses until the
register's own pages render practitioner attempts (the register lists them;
this module only makes the record page and publishes the record's files).

    practitioners/<attempt id>/index.md     the page (generated, not in the nav)
    runs/practitioners/<attempt id>/*.json  the record, its receipts and its submission, as published

Every figure the page shows is marked (builders/site/figures.Figures), so
the verify (site/assets/desk/practitioner.js) checks each one against the
record it rebuilds from the re-executed submission.
"""

from pathlib import Path

from builders.practitioners import published_records
from builders.site.escape import escape as esc
from builders.site.escape import front_matter
from builders.site.figures import Figures

FILES = ("record.json", "receipts.json", "submission.json")


def load_records(runs_dir: Path) -> list:
    """[(attempt id, record)] of runs_dir/practitioners/*/, in id order, each held to the importer's own checks
    (builders/practitioners/_published.py): engine.InputError, one line naming the file and the field, otherwise."""
    return published_records(str(runs_dir))


def page(attempt, record) -> str:
    """The record's page as Markdown with HTML blocks (the site renders it; the tests' stand-in site too). What the
    verify checks sits in verifiable regions (builders/site/marks.py): every figure there is a mark."""
    c = record["content"]
    fig = Figures({"content": c, "record": record})
    # Every record value below is a figure (escaped by Figures) or passes through `esc` (the site's escape: HTML,
    # Markdown and line breaks as character references); front matter is written by a YAML writer. A checkpoint's
    # number is the row's position (a CSS counter), not text: the clock list's order is the record's.
    term = c["termination"]
    result = c.get("result")
    rows = "".join(
        f'<tr><td class="fb-cp"></td><td>{fig(["content", "clock", "per_checkpoint_ms", i])} ms</td>'
        f"<td>{fig(['content', 'clock', 'per_checkpoint_ms', i], 'hms')}</td></tr>"
        for i in range(len(c["clock"]["per_checkpoint_ms"]))
    )
    pauses = "".join(
        f"<li>checkpoint {fig(['content', 'clock', 'pauses', i, 'checkpoint'])}: "
        f"{fig(['content', 'clock', 'pauses', i, 'ms'], 'hms')} ({fig(['content', 'clock', 'pauses', i, 'reason'])})</li>"
        for i in range(len(c["clock"]["pauses"]))
    )
    outcome = (
        f"<p>Status {fig(['content', 'result', 'status'])} · verdict {fig(['content', 'result', 'verdict'], 'verdict')} · "
        f"score {fig(['content', 'result', 'score'], 'score')}</p>"
        if result
        else "<p>Not finalised: the participant stopped before the end, so the run has no grade. Its batches and receipts "
        "are kept: leaving abandoned attempts out would distort the result.</p>"
    )
    files = " · ".join(f'<a href="../../runs/practitioners/{esc(attempt)}/{name}">{name}</a>' for name in FILES)
    meta = front_matter(
        {
            "title": f"Practitioner attempt {attempt}",
            "description": f"A practitioner run of {c['task']['instance_id']}: {term['status']}.",
        }
    )
    body = (
        meta
        + f"""
# Practitioner attempt

<div class="fb-practitioner">
<div data-fb-verified="record">
<p><strong>A person</strong>, pseudonym {fig(["content", "participant"])} (cohort {fig(["content", "cohort"])}), worked
{fig(["content", "task", "instance_id"])} on the practice desk's study mode, with exactly the model worker's affordances.
This run is {fig(["content", "termination", "status"])} ({fig(["content", "termination", "reason"])}) after
{fig(["content", "termination", "checkpoints_closed"])} checkpoints. It is not a calibration or a certification of the person.</p>
{outcome}
<table class="fb-table"><tbody>
<tr><th scope="row">attempt</th><td>{fig(["content", "attempt_id"])}</td></tr>
<tr><th scope="row">consent</th><td>version {fig(["content", "consent", "version"])}, hash {fig(["content", "consent", "sha256"])}</td></tr>
<tr><th scope="row">affordances used</th><td>{fig(["content", "affordances", "used"], "list")} (of {fig(["content", "affordances", "offered"], "list")})</td></tr>
<tr><th scope="row">task clock</th><td>{fig(["content", "clock", "active_ms"], "hms")} working, {fig(["content", "clock", "paused_ms"], "hms")} paused</td></tr>
<tr><th scope="row">receipts head</th><td>{fig(["content", "receipts_head", "size"])}:{fig(["content", "receipts_head", "hash"])}</td></tr>
<tr><th scope="row">engine bundle</th><td>{fig(["content", "engine", "bundle_sha256"])} ({fig(["content", "execution_path"])})</td></tr>
</tbody></table>
<table class="fb-table fb-clock"><caption>Time per checkpoint</caption><thead><tr><th scope="col">checkpoint</th>
<th scope="col">clock</th><th scope="col">h:mm:ss</th></tr></thead><tbody>{rows}</tbody></table>
<p>Pauses: {"<ul>" + pauses + "</ul>" if pauses else "none"}</p>
</div>
<p>Files: {files}</p>
<div class="fb-verify-practitioner" data-record-url="../../runs/practitioners/{esc(attempt)}/record.json" data-site-root="../../"></div>
</div>

<script type="module" src="../../assets/desk/verify.js"></script>
"""
    )
    return body


def site_files(runs_dir: Path) -> dict:
    """{site path: bytes or text}: each record's page and its published files."""
    out = {}
    for attempt, record in load_records(runs_dir):
        out[f"practitioners/{attempt}/index.md"] = page(attempt, record)
        for name in FILES:
            out[f"runs/practitioners/{attempt}/{name}"] = (
                Path(runs_dir) / "practitioners" / attempt / name
            ).read_bytes()
    return out
