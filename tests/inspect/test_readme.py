"""Every command block of the README's "Evaluate your model with Inspect" section runs as written (issue 40):
the `inspect` CLI in a subprocess, its model a local stand-in server speaking the OpenAI wire format
(tests/inspect/openai_standin.py), then `fundbook inspect import` of the logs it wrote, in a scratch folder laid
out as a checkout (.venv and build linked, runs/ holding the published index). The make targets run as dry runs
(`make -n`): `make build` itself is the fresh-checkout build of `make test-long`. A command this test does not
know fails it, so the README cannot gain an Inspect command no test runs."""

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from .openai_standin import StandIn
from . import policies as P

pytestmark = P.WARNINGS + [pytest.mark.pyodide]
REPO = Path(__file__).resolve().parents[2]


def blocks() -> list:
    """[[command line]] of each ```sh block of the section, comments and blank lines dropped."""
    text = (REPO / "README.md").read_text()
    section = text.split("## Evaluate your model with Inspect", 1)[1].split("\n## ", 1)[0]
    out = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        lines = [re.sub(r"\s+#.*$", "", line).strip() for line in block.splitlines()]
        out.append([line for line in lines if line and not line.startswith("#")])
    return out


def test_the_section_s_commands_are_the_ones_this_test_runs():
    assert blocks() == [
        [
            "make inspect",
            "make build-engine",
            ".venv/bin/inspect eval inspect_fundbook/desk --model openai/gpt-4o-mini -T worlds=practice:FUND_01:1..5",
            ".venv/bin/fundbook inspect import logs/*.eval",
            "make build",
        ],
        [
            ".venv/bin/inspect eval inspect_fundbook/desk --model openai-api/local/NAME --model-base-url "
            "http://127.0.0.1:PORT/v1 -T protocol=text -T worlds=FUND_01:1,FUND_02:1"
        ],
    ]


@pytest.fixture
def checkout(tmp_path):
    """A folder laid out as a checkout for the README's relative paths: .venv and build/ linked, runs/ with the
    published index (what an import reads the bundle's facts from), no attempts yet."""
    (tmp_path / ".venv").symlink_to(REPO / ".venv")
    (tmp_path / "build").symlink_to(REPO / "build")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "index.json").write_bytes((REPO / "runs" / "index.json").read_bytes())
    return tmp_path


def run(line, cwd, server, make_ok=True):
    """One README line, as a shell runs it, in `cwd`; -> CompletedProcess (asserted to succeed)."""
    env = dict(
        os.environ,
        OPENAI_API_KEY="stand-in",
        OPENAI_BASE_URL=server.base_url,
        LOCAL_API_KEY="stand-in",
        INSPECT_DISPLAY="none",
        INSPECT_LOG_LEVEL="warning",
    )
    env.pop("INSPECT_LOG_DIR", None)  # the README's logs/ is Inspect's default
    line = line.replace("http://127.0.0.1:PORT/v1", server.base_url)
    if line.startswith("make "):
        argv = ["make", "-n", "-C", str(REPO), *shlex.split(line)[1:]]  # a dry run: the target and its recipe exist
        done = subprocess.run(argv, capture_output=True, text=True)
    else:
        assert line.startswith((".venv/bin/inspect eval ", ".venv/bin/fundbook inspect import ")), line
        done = subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    return done


def _imported(checkout):
    out = {}
    for record in sorted((checkout / "runs" / "attempts").glob("*/record.json")):
        c = json.loads(record.read_text())["content"]
        out[record.parent.name] = c
    return out


def test_the_openai_compatible_server_command_runs_as_written_and_imports(checkout):
    """The README's second block: --model-base-url (not -M base_url) and a comma list of worlds, protocol text."""
    (line,) = blocks()[1]
    with StandIn() as server:
        run(line, checkout, server)
        assert {r["path"] for r in server.requests} == {"/v1/chat/completions"}
        assert {r["model"] for r in server.requests} == {"NAME"}
        assert {r["authorization"] for r in server.requests} == {"Bearer stand-in"}
        run(".venv/bin/fundbook inspect import logs/*.eval", checkout, server)
    got = _imported(checkout)
    assert sorted(
        (c["task"]["instance_id"], c["model"]["as_logged"], c["inspect"]["protocol"]) for c in got.values()
    ) == [("FUND_01/seed-1", "openai-api/local/NAME", "text"), ("FUND_02/seed-1", "openai-api/local/NAME", "text")]
    c = next(iter(got.values()))
    assert c["inspect"]["task_args"]["worlds"] == ["FUND_01:1", "FUND_02:1"]  # Inspect's comma list, as it hands it
    assert c["inspect"]["model_base_url"] == server.base_url
    assert all(c["moves"] == 20 and c["result"]["status"] == "SCORED" for c in got.values())  # do-nothing, 20 days


@pytest.mark.long
def test_every_command_block_of_the_inspect_section_runs_as_written(checkout):
    with StandIn() as server:
        for block in blocks():
            for line in block:
                run(line, checkout, server)
        again = run(".venv/bin/fundbook inspect import logs/*.eval", checkout, server)  # the second block's log too
    assert again.stdout.count("already published, unchanged") == 5
    got = _imported(checkout)
    worlds = sorted((c["model"]["as_logged"], c["task"]["instance_id"]) for c in got.values())
    assert worlds == sorted(
        [("openai/gpt-4o-mini", f"FUND_01/seed-{s}") for s in range(1, 6)]
        + [("openai-api/local/NAME", "FUND_01/seed-1"), ("openai-api/local/NAME", "FUND_02/seed-1")]
    )
