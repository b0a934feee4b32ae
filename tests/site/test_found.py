"""Found and shared: the sitemap lists the pages at the site's address, Open
Graph images are absolute, the contract links every JSON Schema, npm users get
thin aliases, and the Node requirement is what the pinned packages declare."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.xdist_group("site")

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_URL = "http://127.0.0.1:8000/"


def test_the_sitemap_lists_every_page_at_the_site_url(built_site):
    public = built_site[0]
    locs = re.findall(r"<loc>([^<]+)</loc>", (public / "sitemap.xml").read_text())
    pages = {p.relative_to(public).parent.as_posix() for p in public.rglob("index.html")}
    assert locs and all(loc.startswith(DEFAULT_URL) for loc in locs)
    listed = {loc[len(DEFAULT_URL):].rstrip("/") or "." for loc in locs}
    assert pages - {"search"} <= listed, sorted(pages - listed)[:5]


def test_og_images_are_absolute(built_site):
    public = built_site[0]
    for rel in ("index.html", "desk/index.html", "runs/index.html"):
        image = re.search(r'property="og:image" content="([^"]+)"', (public / rel).read_text()).group(1)
        assert image.startswith(DEFAULT_URL + "og/") and image.endswith(".png"), image
        assert (public / image[len(DEFAULT_URL):]).is_file()


def test_the_site_url_comes_from_the_environment(monkeypatch):
    from mkdocs.config import load_config
    monkeypatch.setenv("FUNDBOOK_SITE_URL", "https://example.org/fundbook/")
    assert load_config(str(ROOT / "mkdocs.yml"))["site_url"] == "https://example.org/fundbook/"
    monkeypatch.delenv("FUNDBOOK_SITE_URL")
    assert load_config(str(ROOT / "mkdocs.yml"))["site_url"] == DEFAULT_URL


def test_the_contract_links_every_json_schema(built_site):
    public = built_site[0]
    page = (public / "contract" / "index.html").read_text()
    links = set(re.findall(r'href="\.\./runs/schemas/([\w.-]+\.json)"', page))
    schemas = {p.name for p in (ROOT / "runs" / "schemas").glob("*.schema.json")}
    assert schemas and links == schemas
    for name in links:
        served = public / "runs" / "schemas" / name
        assert json.loads(served.read_text())["$schema"].startswith("https://json-schema.org/")


def test_npm_scripts_are_thin_aliases_of_make():
    package = json.loads((ROOT / "package.json").read_text())
    assert package["scripts"] == {"build": "make build", "preview": "make preview", "test": "make test"}
    assert package["devDependencies"]["axe-core"] == json.loads((ROOT / "package-lock.json").read_text())[
        "packages"]["node_modules/axe-core"]["version"]  # pinned exactly


CHECK_ENGINES = """
const semver = require("semver");
const lock = require(process.argv[1]);
const floor = semver.minVersion(lock.packages[""].engines.node).version;
const out = { floor, refused: [] };
for (const [path, meta] of Object.entries(lock.packages)) {
  const range = meta.engines && meta.engines.node;
  if (path && range && !semver.satisfies(floor, range)) out.refused.push(`${path} ${meta.version} wants node ${range}`);
}
console.log(JSON.stringify(out));
"""


def test_the_node_requirement_covers_every_pinned_package():
    """package.json's engines.node floor satisfies every locked package's own engines.node."""
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules" / "semver").is_dir():
        pytest.skip("node or node_modules is not installed (npm ci)")
    proc = subprocess.run([node, "-e", CHECK_ENGINES, str(ROOT / "package-lock.json")], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True)
    out = json.loads(proc.stdout)
    assert out["floor"].startswith("20."), out
    assert out["refused"] == []
    readme = (ROOT / "README.md").read_text()
    assert f"Node >= {'.'.join(out['floor'].split('.')[:2])}" in readme
