"""`make bench-desk`: the desk's load and verify times in headless Chromium, side by side.

In one run, each repetition in a fresh browser profile (cold HTTP cache):
  bare    a page that only calls loadPyodide() on the same vendored runtime, stock options;
  desk    the practice desk from page open to the first packet shown, restoring the
          engine's memory snapshot (then once more in the same profile: a return visit);
  cold    the same with the snapshot skipped (?start=cold: start Python, import the engine);
  verify  a run page's verify, timed from the click once the runtime is ready.
The site is served as a static host serves it: precompressed twins (.br, .gz)
with their Content-Encoding (builders/site/serve.py). For the desk it also
counts what a first visit transfers: requests and bytes on the wire (headers
and encoded bodies, the worker's included), and any request that failed.
Figures are printed, never asserted; the goals (desk <= 0.4x bare, <= 12 MiB
transferred, verify <= 1 s) are shown beside them.
"""

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from builders.desk import devsite
from builders.site.serve import Serving as Server

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("FUNDBOOK_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
RUN = "reference-W1"

BARE = b"""<!doctype html><meta charset="utf-8"><title>bare loadPyodide</title>
<script type="module">
import { loadPyodide } from "../vendor/pyodide/pyodide.mjs";
const py = await loadPyodide({ indexURL: new URL("../vendor/pyodide/", import.meta.url).href });
py.runPython("1 + 1");
window.bareMs = performance.now();
</script>"""

VERIFY = """async () => {
  const client = await import(new URL("assets/desk/client.js", document.baseURI.replace(/runs\\/.*$/, "")).href);
  await client.engineInfo();
  const t = performance.now();
  document.querySelector(".fb-verify button").click();
  while (!document.querySelector(".fb-verify [data-result]")) await new Promise((r) => setTimeout(r, 2));
  return { ms: performance.now() - t, result: document.querySelector(".fb-verify [data-result]").dataset.result };
}"""


def _site(tmp: Path):
    public = ROOT / "public"
    choice = os.environ.get("FUNDBOOK_DESK_SITE") or ("public" if devsite.public_is_current(public) else "dev")
    if choice == "public":
        return public, "built site (public/)"
    return (
        devsite.build(tmp / "site", devsite.engine_bundle(tmp), [RUN], precompressed=True),
        "stand-in site (builders/desk/devsite.py, precompressed as `make build` does)",
    )


def measure(repeat: int):
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root, label = _site(Path(tmp))
        run_page = _run_page(root)
        with Server(root, overlay={"/__bench/bare.html": BARE}) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            rows = {
                "bare": [],
                "desk": [],
                "verify": [],
                "runtime": [],
                "bundle": [],
                "import": [],
                "worker": [],
                "state": [],
                "bytes": [],
                "requests": [],
                "failed": [],
                "cold": [],
                "cold_runtime": [],
                "cold_import": [],
                "return": [],
            }
            results, starts = set(), set()
            for _ in range(repeat):
                for kind in ("bare", "desk", "cold", "verify"):  # interleaved, so load on the machine hits all alike
                    ctx = browser.new_context()
                    page = ctx.new_page()
                    if kind == "bare":
                        page.goto(url + "__bench/bare.html")
                        page.wait_for_function("() => window.bareMs !== undefined", timeout=120_000)
                        rows["bare"].append(page.evaluate("window.bareMs"))
                    elif kind == "desk":
                        done, failed = [], []
                        ctx.on("requestfinished", lambda r: done.append(r))
                        ctx.on("requestfailed", lambda r: failed.append(f"{r.method} {r.url} {r.failure}"))
                        page.goto(url + "desk/")
                        page.wait_for_function("() => window.fbDeskTimings !== undefined", timeout=120_000)
                        t = page.evaluate("window.fbDeskTimings")
                        page.wait_for_load_state(
                            "networkidle"
                        )  # count what arrives after the packet too (search index)
                        sizes = [r.sizes() for r in done]
                        rows["bytes"].append(sum(s["responseBodySize"] + s["responseHeadersSize"] for s in sizes))
                        rows["requests"].append(len(done) + len(failed))
                        rows["failed"].extend(failed)
                        rows["desk"].append(t["first_packet_ms"])
                        rows["runtime"].append(t["runtime_ms"])
                        rows["bundle"].append(t["bundle_fetch_ms"])
                        rows["import"].append(t["import_ms"])
                        rows["worker"].append(t["engine_ready_ms"] - t["ready_ms"])
                        rows["state"].append(t["first_packet_ms"] - t["engine_ready_ms"])
                        starts.add(t["start"])
                        page.reload()  # a return visit: the HTTP cache holds the runtime, the image and the bundle
                        page.wait_for_function("() => window.fbDeskTimings !== undefined", timeout=120_000)
                        rows["return"].append(page.evaluate("window.fbDeskTimings")["first_packet_ms"])
                    elif kind == "cold":
                        page.goto(url + "desk/?start=cold")
                        page.wait_for_function("() => window.fbDeskTimings !== undefined", timeout=120_000)
                        t = page.evaluate("window.fbDeskTimings")
                        rows["cold"].append(t["first_packet_ms"])
                        rows["cold_runtime"].append(t["runtime_ms"])
                        rows["cold_import"].append(t["import_ms"])
                    else:
                        page.goto(url + run_page)
                        out = page.evaluate(VERIFY)
                        rows["verify"].append(out["ms"])
                        results.add(out["result"])
                    ctx.close()
            browser.close()
    return label, rows, results, starts


def _run_page(root: Path) -> str:
    try:
        return devsite.verify_page(root, RUN)
    except LookupError as exc:
        raise SystemExit(f"bench-desk: {exc}")


def fmt(values):
    return f"{statistics.median(values):7.0f} ms  [{min(values):.0f}-{max(values):.0f}]"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="bench-desk", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", "3")))
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"bench-desk: {CHROMIUM} is not installed (apt-get install chromium)", file=sys.stderr)
        return 1
    label, rows, results, starts = measure(args.repeat)
    bare, desk, cold, back = (statistics.median(rows[k]) for k in ("bare", "desk", "cold", "return"))
    print(f"desk benchmark: headless Chromium, {label}, {args.repeat} cold runs each, median [min-max]")
    print(f"  bare loadPyodide (stock options)     {fmt(rows['bare'])}")
    print(
        f"  desk: page open to first packet      {fmt(rows['desk'])}   {desk / bare:.2f}x bare (goal <= 0.40x; "
        f"started from: {', '.join(sorted(starts))})"
    )
    print(f"    page open to worker start          {fmt(rows['worker'])}")
    print(f"    runtime ready (in the worker)      {fmt(rows['runtime'])}   (the snapshot fetched, checked, restored)")
    print(f"    bundle fetched and checked         {fmt(rows['bundle'])}   (in parallel with the runtime)")
    print(f"    engine import (in the image)       {fmt(rows['import'])}")
    print(f"    first packet: engine call + paint  {fmt(rows['state'])}")
    print(f"  desk, return visit (HTTP cache)      {fmt(rows['return'])}   {back / bare:.2f}x bare")
    print(f"  desk, cold start (?start=cold)       {fmt(rows['cold'])}   {cold / bare:.2f}x bare (no snapshot)")
    print(f"    runtime ready (in the worker)      {fmt(rows['cold_runtime'])}")
    print(f"    engine import from the zip         {fmt(rows['cold_import'])}")
    mib = statistics.median(rows["bytes"]) / 2**20
    print(
        f"  desk first visit transfers           {mib:7.2f} MiB in {statistics.median(rows['requests']):.0f} requests"
        f"   (goal <= 12 MiB on the wire; {len(rows['failed'])} failed{': ' + rows['failed'][0] if rows['failed'] else ''})"
    )
    print(
        f"  verify {RUN}, runtime ready   {fmt(rows['verify'])}   (goal <= 1000 ms; result: {', '.join(sorted(results))})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
