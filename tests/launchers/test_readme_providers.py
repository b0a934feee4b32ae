"""The README's provider commands run as written (issue 40, item 6; the Inspect commands are
tests/inspect/test_readme.py's): every `fundbook-launch` line of the ```sh blocks of "### Evaluate your model",
in order, through the real command-line group (click's runner, in a scratch folder laid out as a checkout), each
asserted to exit 0, against the stand-in server of tests/launchers/api_standin.py playing the reference policy
on the world the line names.

Substituted, and nothing else: the SDKs' documented base-URL variables (OPENAI_BASE_URL, ANTHROPIC_BASE_URL) and
`https://example.org/v1` name the stand-in; the keys are fake ones of the right shape; the checkout's
runs/attempts/ (the default project) and the claim registry are the scratch folder's; the README's ```json
block is written as my-prices.json; the checkout's clean-tree and published-engine checks are answered as for a
committed checkout; the stand-in reports the usage `budget` plans a call at. The block for a server on this host
(`make local`, llama-cpp-python's server) is pinned
here and run by test_openai_compatible_real.py (`make test-long`). A line this test does not know fails it."""

import json
import os
import re
import shlex
import shutil

import pytest

from launchers import _project

from .api_standin import StandIn
from .provider_runs import Cli, clean_checkout, environment

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (.ci/run installs it)"
)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STAND_IN_URL = "https://example.org/v1"
PLANNED = (2500, 800)  # the usage every call reports: what `budget` plans an HTTP sampler's call at (the freeze's
# estimate, so the pilot's cost criterion is met as a real model's is when the plan is right)


def section() -> str:
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    return text.split("### Evaluate your model\n", 1)[1].split("\n## ", 1)[0]


def blocks(kind="sh") -> list:
    """[[line]] of each ```sh block (comments and blank lines dropped), or the text of each ```json block."""
    found = re.findall(rf"```{kind}\n(.*?)```", section(), re.S)
    if kind != "sh":
        return found
    out = []
    for block in found:
        lines = [re.sub(r"\s+#.*$", "", line).strip() for line in block.splitlines()]
        out.append([line for line in lines if line and not line.startswith("#")])
    return out


def provider_blocks():
    return [b for b in blocks() if all(line.startswith(("fundbook-launch ", "export ")) for line in b)]


def test_the_section_s_blocks_are_the_ones_this_test_runs():
    every = blocks()
    assert len(provider_blocks()) == 3 and len(every) == 4
    local = every[3]
    assert local[0] == "make local" and local[1].startswith("python -m llama_cpp.server ")
    assert [shlex.split(line)[1] for line in local[2:]] == ["authorise", "execute", "rederive"]
    for block in provider_blocks():
        if block[0].startswith("export "):  # the server's URL, for every command of the block (the pilot too)
            assert block[0] == f"export FUNDBOOK_OPENAI_BASE_URL={STAND_IN_URL}"
            block = block[1:]
        verbs = [shlex.split(line)[1] for line in block]
        assert verbs == ["budget", "freeze", "authorise", "pilot", "authorise", "execute", "verify", "export"], verbs
        for line in block:  # with only an API key: the isolated sandbox, never Modal's
            if shlex.split(line)[1] in ("budget", "freeze", "authorise", "execute"):
                assert "--sandbox local-isolated" in line, line
    prices = json.loads(blocks("json")[0])
    assert set(prices["sandboxes"]) == {"local", "local-isolated", "modal"} and "my-model" in prices["models"]


def _world(argv):
    """(family, seed) a pilot or execute line plays (the pilot's family is the freeze's: FUND_01 here)."""
    family = argv[argv.index("--family") + 1] if "--family" in argv else "FUND_01"
    return family, int(argv[argv.index("--seed") + 1])


@pytest.mark.parametrize("index", [0, 1, 2], ids=["openai", "anthropic", "openai-compatible"])
def test_a_provider_block_runs_as_written(index, tmp_path, monkeypatch):
    block = provider_blocks()[index]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_project, "REPO", str(tmp_path))  # the default project: this folder's runs/attempts/
    (tmp_path / "runs" / "attempts").mkdir(parents=True)
    (tmp_path / "my-prices.json").write_text(blocks("json")[0])
    with StandIn(usage=PLANNED) as server, clean_checkout():
        env = environment(server, str(tmp_path / "state"), None)
        env["FUNDBOOK_LAUNCH_PROJECT"] = None  # as a reader's shell: the default, or the line's --project
        run = Cli(env)
        for line in block:
            argv = shlex.split(line.replace(STAND_IN_URL, server.base_url))
            if argv[0] == "export":  # as the shell does: the variable for every command after it
                name, value = argv[1].split("=", 1)
                env[name] = value
                continue
            assert argv[0] == "fundbook-launch", line
            if argv[1] in ("pilot", "execute"):
                server.play(*_world(argv))
            result = run(*argv[1:])
            if argv[1] == "execute":
                record_path = os.path.join(argv[argv.index("--out") + 1], "record.json")
        with open(record_path, encoding="utf-8") as fh:
            c = json.load(fh)["content"]
        assert c["termination"]["status"] == "completed" and c["result"]["score"]["points"] == 100
        assert c["information_boundary"]["sandbox"] == "local-isolated" and c["role"] == "confirmatory"
        assert c["freeze"]["pilot"]["required"] is True and c["freeze"]["pilot"]["verdict"] == "PASS"
        assert c["freeze"]["deviations"] == []  # the README's path needs none
        assert c["service"]["base_url"] in (server.base_url, server.root)  # the service it reached: the stand-in
    exported = argv[argv.index("--out-dir") + 1]  # the last line: export, the attempts' tables
    assert os.path.isfile(os.path.join(exported, "attempts.parquet")), result.output


def test_the_run_it_page_repeats_the_readme_s_blocks_and_sandbox_table():
    """The site's "Run it" page gives the same commands and the same choice of sandbox (a copy that cannot drift)."""
    with open(os.path.join(REPO, "site", "run-it.md"), encoding="utf-8") as fh:
        page = fh.read()
    text = section()
    for block in re.findall(r"```(?:sh|json)\n.*?```", text, re.S)[:4]:  # the three providers' and the prices
        assert block in page, block[:80]
    table = text[text.index("| `--sandbox` |") : text.index("\n\nPer provider:")]
    assert table in page
