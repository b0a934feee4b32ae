"""`python -m builders.site.bench`: time build-og and the strict MkDocs build
of the site from runs/ into a temporary folder, and print the figures side by
side (seconds, pages, cards, size). Nothing in the tree is touched."""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _timed(argv, env):
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"bench-site: {' '.join(argv[:3])} failed: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}")
    return time.monotonic() - started


def main():
    with tempfile.TemporaryDirectory(prefix="fundbook-bench-site-") as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, FUNDBOOK_OG_DIR=str(tmp / "og"), NO_MKDOCS_2_WARNING="1")
        og = _timed([sys.executable, "-m", "builders.og", "--out", str(tmp / "og")], env)
        mk = _timed([str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "--quiet", "-d",
                     str(tmp / "public")], env)
        public = tmp / "public"
        pages = sum(1 for _ in public.rglob("*.html"))
        cards = sum(1 for _ in (tmp / "og").rglob("*.png"))
        size = sum(p.stat().st_size for p in public.rglob("*") if p.is_file())
        runs = sum(1 for p in (public / "runs").iterdir() if p.is_dir() and (p / "index.html").is_file())
    print(f"{'stage':<10}{'seconds':>9}{'output':>36}")
    print(f"{'build-og':<10}{og:>9.2f}{f'{cards} cards':>36}")
    print(f"{'site':<10}{mk:>9.2f}{f'{pages} pages ({runs} runs), {size / 1e6:.1f} MB':>36}")


if __name__ == "__main__":
    main()
