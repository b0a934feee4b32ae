"""`python -m builders.desk.stdlib_trace [--write]`: the import trace behind stdlib_modules.txt.

stdlib_trace.mjs runs stdlib_workload.py in the pinned Pyodide against this checkout's engine bundle (start-up,
every desk call and tool, the error paths, verify of a record of each kind) and reports every stdlib module it
loaded; the list is that, less stdlib_subset.OPTIONAL. Host only: stdlib_subset.py, which the runner loads into
Pyodide by its path, keeps the list's rules and imports nothing of the build.
"""

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from builders.desk.stdlib_subset import HEADER, MODULES, ROOT, listed, read_modules

TRACE = Path(__file__).resolve().parent / "stdlib_trace.mjs"
# One published record of each kind, for verify's part of the workload.
TRACE_RECORDS = ("reference-W1", "adversarial-W2-M1_stale_quote", "baseline-FUND_01-seed-1-do-nothing")


def trace(bundle: Path, stdlib: Path = None, records=TRACE_RECORDS) -> dict:
    """Run the desk workload in the pinned Pyodide: {modules, failures, answers, pyodide_version}."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not installed: the trace runs the pinned Pyodide in Node")
    argv = [node, str(TRACE), "--bundle", str(bundle)]
    if stdlib is not None:
        argv += ["--stdlib", str(stdlib)]
    for run_id in records:
        argv += ["--record", str(ROOT / "runs" / f"{run_id}.json")]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=600)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"stdlib trace failed (exit {proc.returncode}): {last}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    import click

    @click.command()
    @click.option("--write", is_flag=True, help=f"rewrite {MODULES.name}")
    def cli(write):
        """Trace the desk's imports against this checkout's engine bundle."""
        from builders.desk import devsite

        with tempfile.TemporaryDirectory() as tmp:
            try:
                out = trace(devsite.engine_bundle(Path(tmp)) / "fundbook-engine.zip")
            except RuntimeError as exc:
                raise click.ClickException(str(exc))
        if out["failures"]:
            raise click.ClickException(f"the workload failed: {out['failures'][0]}")
        text = HEADER + "".join(f"{m}\n" for m in listed(out["modules"]))
        if write:
            MODULES.write_text(text, encoding="utf-8")
            click.echo(f"{MODULES.relative_to(ROOT)}: {len(read_modules(text))} modules")
        else:
            click.echo(text, nl=False)

    return cli.main(argv, prog_name="python -m builders.desk.stdlib_trace", standalone_mode=True)


if __name__ == "__main__":
    sys.exit(main())
