"""Found and shared: with a configured site URL the sitemap and the Open Graph
images are absolute under it, without one nothing names an absolute address;
the contract links every JSON Schema, npm users get thin aliases, and the
Node requirement is what the pinned packages declare."""

import json
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.xdist_group("site")

ROOT = Path(__file__).resolve().parents[2]


def test_without_a_site_url_og_images_are_relative_files_of_the_site(built_site):
    public = built_site[0]
    for rel in ("index.html", "desk/index.html", "runs/index.html"):
        image = re.search(r'property="og:image" content="([^"]+)"', (public / rel).read_text()).group(1)
        assert not image.startswith(("http:", "https:", "/")) and image.endswith(".png"), image
        assert ((public / rel).parent / image).resolve().is_file(), image
    assert not (public / "sitemap.xml").exists()


def test_the_site_url_comes_from_the_environment(monkeypatch):
    from mkdocs.config import load_config

    monkeypatch.setenv("FUNDBOOK_SITE_URL", "https://example.org/fundbook/")
    assert load_config(str(ROOT / "mkdocs.yml"))["site_url"] == "https://example.org/fundbook/"
    monkeypatch.delenv("FUNDBOOK_SITE_URL")
    assert load_config(str(ROOT / "mkdocs.yml"))["site_url"] is None


def _hooks(tmp_path, site_url):
    """The site hooks' post-page and post-build steps over a one-page site, with or without a site URL."""
    from builders.site import csp, hooks

    (tmp_path / "og" / "pages").mkdir(parents=True)
    (tmp_path / "og" / "pages" / "runs.png").write_bytes(b"png")
    hooks._state.update(
        og=tmp_path / "og", descriptions={}, scripts=SimpleNamespace(hashes=lambda base: [], all_hashes=lambda: [])
    )
    page = SimpleNamespace(file=SimpleNamespace(src_uri="runs/index.md"), url="runs/", title="Run register")
    config = {"site_url": site_url, "site_name": "fundbook", "site_description": "d", "site_dir": str(tmp_path)}
    html = hooks.on_post_page("<html><head></head><body></body></html>", page, config)
    for name in ("sitemap.xml", "sitemap.xml.gz"):
        (tmp_path / name).write_text("<urlset/>")
    hooks.on_post_build(config)
    image = re.search(r'property="og:image" content="([^"]+)"', html).group(1)
    return image, (tmp_path / "sitemap.xml").exists(), (tmp_path / csp.HEADERS_FILE).is_file()


def test_a_configured_site_url_makes_og_images_absolute_and_keeps_the_sitemap(tmp_path):
    image, sitemap, headers = _hooks(tmp_path, "https://example.org/fundbook/")
    assert image == "https://example.org/fundbook/og/pages/runs.png" and sitemap and headers


def test_without_a_site_url_the_hooks_publish_no_absolute_address(tmp_path):
    image, sitemap, headers = _hooks(tmp_path, None)
    assert image == "../og/pages/runs.png" and not sitemap and headers


def test_the_readme_says_how_to_set_the_real_url():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### Publishing at a real address") :]
    section = section[: section.index("\n#", 1)]
    assert "FUNDBOOK_SITE_URL=https://example.org/fundbook/ make site" in section
    assert all(word in section for word in ("canonical", "og:image", "sitemap.xml"))


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
    # preview goes through builders/site/preview.sh, which passes `-- --port N` to `make preview` as PORT
    assert package["scripts"] == {"build": "make build", "preview": "sh builders/site/preview.sh", "test": "make test"}
    assert (
        package["devDependencies"]["axe-core"]
        == json.loads((ROOT / "package-lock.json").read_text())["packages"]["node_modules/axe-core"]["version"]
    )  # pinned exactly


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
    proc = subprocess.run(
        [node, "-e", CHECK_ENGINES, str(ROOT / "package-lock.json")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    out = json.loads(proc.stdout)
    assert out["floor"].startswith("20."), out
    assert out["refused"] == []
    readme = (ROOT / "README.md").read_text()
    assert f"Node >= {'.'.join(out['floor'].split('.')[:2])}" in readme
