"""The hashed locks: no index option of the machine they were compiled on (a fresh `make build` printed ~200
"Location ... is ignored" warnings from them), every package pinned with a hash, and the HTTP API SDKs pinned
in the runtime lock and the dev lock at the same version, which the Inspect extra's lock never overrides."""

import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOCKS = ("requirements.lock", "requirements-runtime.lock", "requirements-local.lock")


def _read(name):
    with open(os.path.join(REPO, name), encoding="utf-8") as fh:
        return fh.read()


@pytest.mark.parametrize("name", LOCKS)
def test_a_lock_names_no_index_and_hashes_every_pin(name):
    text = _read(name)
    assert not re.search(r"^\s*--(extra-)?index-url|^\s*--find-links|^\s*-f\s|file:///", text, flags=re.M)
    pins = re.findall(
        r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+) \\\n((?:    --hash=sha256:[0-9a-f]{64}(?: \\)?\n)+)", text, flags=re.M
    )
    names = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", text, flags=re.M)
    assert names and len(pins) == len(names)


def test_the_api_sdks_are_pinned_alike_in_the_runtime_and_dev_locks():
    for sdk, version in (("openai", "3.63.0"), ("anthropic", "0.125.0")):
        for name in LOCKS[:2]:
            assert re.search(rf"^{sdk}=={re.escape(version)} \\$", _read(name), flags=re.M), (name, sdk)


def _pins(name):
    return dict(re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+) \\$", _read(name), flags=re.M))


def test_the_inspect_lock_overrides_no_base_pin_but_its_two_documented_ones():
    """`make inspect` installs requirements-inspect.lock over requirements.lock with --no-deps: a pin of its own
    for a package the base lock holds replaces the base one in the venv. Only fsspec and python-dateutil may
    (inspect-ai's own bounds, said in its header); the HTTP SDKs and their transports never: Inspect's openai
    providers run on the samplers' openai."""
    base, inspect = _pins("requirements.lock"), _pins("requirements-inspect.lock")
    assert "inspect-ai" in inspect and base["openai"] == "3.63.0"
    assert not {"openai", "anthropic", "httpx", "httpx2"} & set(inspect)
    overridden = sorted(k for k in set(base) & set(inspect) if base[k] != inspect[k])
    assert overridden == ["fsspec", "python-dateutil"]
