"""`python -m builders.site.bench`: time build-og and the strict MkDocs build
of the site from runs/ into a temporary folder, then, in headless Chromium
(Debian's, fresh profile each time), "Verify this run" on one run page and
"Verify the whole register", and print the figures side by side (seconds,
pages, cards, size; BENCH_REPEAT=2 browser runs each). Nothing in the tree
is touched."""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def _timed(argv, env):
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"bench-site: {' '.join(argv[:3])} failed: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}")
    return time.monotonic() - started


def _verify_times(public: Path, repeat: int) -> dict:
    """{"run": [s], "register": [s], "runs": n, "results": {...}}: click to result, each in a fresh profile."""
    from playwright.sync_api import sync_playwright

    from builders.site.serve import Serving

    out = {"run": [], "register": [], "results": set()}
    with Serving(public) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for _ in range(repeat):
            for kind, path, button, box in (
                ("run", f"runs/{RUN}/", "Verify this run in your browser", ".fb-verify"),
                ("register", "runs/", "Verify the whole register", ".fb-verify-register"),
            ):
                context = browser.new_context()
                page = context.new_page()
                page.goto(url + path)
                started = time.monotonic()
                page.get_by_role("button", name=button).click()
                result = page.locator(f"{box} [data-result]")
                result.wait_for(state="attached", timeout=600_000)
                out[kind].append(time.monotonic() - started)
                out["results"].add(f"{kind}: {result.get_attribute('data-result')}")
                if kind == "register":
                    out["runs"] = result.get_attribute("data-total")
                context.close()
        browser.close()
    return out


def main():
    repeat = int(os.environ.get("BENCH_REPEAT", "2"))
    with tempfile.TemporaryDirectory(prefix="fundbook-bench-site-") as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, FUNDBOOK_OG_DIR=str(tmp / "og"), NO_MKDOCS_2_WARNING="1")
        og = _timed([sys.executable, "-m", "builders.og", "--out", str(tmp / "og")], env)
        mk = _timed(
            [str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "--quiet", "-d", str(tmp / "public")],
            env,
        )
        public = tmp / "public"
        pages = sum(1 for _ in public.rglob("*.html"))
        cards = sum(1 for _ in (tmp / "og").rglob("*.png"))
        size = sum(p.stat().st_size for p in public.rglob("*") if p.is_file())
        runs = sum(1 for p in (public / "runs").iterdir() if p.is_dir() and (p / "index.html").is_file())
        verify = _verify_times(public, repeat) if Path(CHROMIUM).exists() else None
    print(f"{'stage':<10}{'seconds':>9}{'output':>36}")
    print(f"{'build-og':<10}{og:>9.2f}{f'{cards} cards':>36}")
    print(f"{'site':<10}{mk:>9.2f}{f'{pages} pages ({runs} runs), {size / 1e6:.1f} MB':>36}")
    if verify is None:
        print(f"verify: {CHROMIUM} is not installed (apt-get install chromium)")
        return
    one, whole = statistics.median(verify["run"]), statistics.median(verify["register"])
    print(
        f"verify in headless Chromium, cold profile, median of {repeat} [min-max], click to result "
        f"(engine start included):"
    )
    print(f"  {RUN:<28}{one:>7.1f} s  [{min(verify['run']):.1f}-{max(verify['run']):.1f}]")
    print(
        f"  {'whole register (' + str(verify['runs']) + ' runs)':<28}{whole:>7.1f} s  "
        f"[{min(verify['register']):.1f}-{max(verify['register']):.1f}]   {whole / one:.1f}x one run; "
        f"results: {', '.join(sorted(verify['results']))}"
    )


if __name__ == "__main__":
    main()
