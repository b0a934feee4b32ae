"""The hashed locks: no index option of the machine they were compiled on (a fresh `make build` printed ~200
"Location ... is ignored" warnings from them), every package pinned with a hash, and the HTTP API SDKs pinned
in the runtime lock and the dev lock at the same version."""

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
    pins = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+) \\\n((?:    --hash=sha256:[0-9a-f]{64}(?: \\)?\n)+)",
                      text, flags=re.M)
    names = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", text, flags=re.M)
    assert names and len(pins) == len(names)


def test_the_api_sdks_are_pinned_alike_in_the_runtime_and_dev_locks():
    for sdk, version in (("openai", "2.54.0"), ("anthropic", "0.125.0")):
        for name in LOCKS[:2]:
            assert re.search(rf"^{sdk}=={re.escape(version)} \\$", _read(name), flags=re.M), (name, sdk)
