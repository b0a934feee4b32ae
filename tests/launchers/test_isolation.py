"""Nothing the worker can read holds gold, reference plans, mutations, evaluator
sources or secrets; no record or manifest holds the value of a key variable."""

import json
import os

import pytest

import engine
from launchers import _staging
from launchers._sandbox_local import LocalSandbox
from launchers._staging import NEVER_STAGED, TOOL_MODULES, check_closure, stage

SECRETS = {
    "TINKER_API_KEY": "tml-secret-4f1d2c9a7e",
    "MODAL_TOKEN_ID": "ak-secret-88d0c1",
    "MODAL_TOKEN_SECRET": "as-secret-b7e55f",
    "OPENAI_API_KEY": "sk-secret-0a9c3e71",
}
ENGINE_DIR = os.path.dirname(engine.__file__)
# distinctive text of evaluator-only code: definitions of the reference plan, gold, grading, mutations
FORBIDDEN_CODE = [
    "def reference_actions",
    "def gold_candidate",
    "def grade_candidate",
    "MUTATIONS",
    "M4_fully_hedged_tail",
    "def policy_batch",
    "def scored_result",
    "def execute_fixture",
]
# world data a packet never carries: scheduled events, the approval policy, gold reports
FORBIDDEN_DATA_KEYS = ("events", "approval_policy", "gold_report", "hidden", "reference")


def _module_head(name):
    with open(os.path.join(ENGINE_DIR, name + ".py"), encoding="utf-8") as fh:
        return fh.read().split("\n")[0]


def _packets(family, seed):
    """Every checkpoint packet of a run that plays the reference policy (so books fill up)."""
    from engine._baselines import policy_batch

    run = engine.Run(engine.generate(family, seed))
    out = []
    while run.open_day is not None:
        packet = run.packet()
        out.append(packet)
        run.submit(policy_batch("reference", packet))
    return run.instance, out


def _allowed(path):
    if path in ("worker.py", "protocol.py", "packet.json", "desktools/__init__.py"):
        return True
    if path.startswith("desktools/"):
        return path[len("desktools/") : -3] in TOOL_MODULES
    return path.startswith("sources/") and path.endswith(".txt")


@pytest.mark.parametrize("family", engine.FAMILIES)
def test_staged_files_hold_only_public_information(family):
    instance, packets = _packets(family, 1)
    evaluator_heads = [_module_head(m) for m in NEVER_STAGED if os.path.exists(os.path.join(ENGINE_DIR, m + ".py"))]
    for packet in packets:
        files = stage(packet)
        assert all(_allowed(p) for p in files), sorted(files)
        text = "\n".join(data.decode("utf-8") for data in files.values())
        for needle in FORBIDDEN_CODE:
            assert needle not in text, (packet["day"], needle)
        staged_packet = json.loads(files["packet.json"])
        assert staged_packet == packet and not set(FORBIDDEN_DATA_KEYS) & set(staged_packet)
        for event in instance["events"]:
            assert json.dumps(event, sort_keys=True) not in text
        for head in evaluator_heads:
            assert head not in text
        for source in instance["sources"]:
            if source["published_day"] > packet["day"]:
                assert source["text"] not in text, (packet["day"], source["id"])


def test_the_staged_tools_import_nothing_else(monkeypatch):
    check_closure()
    monkeypatch.setattr(_staging, "TOOL_MODULES", tuple(m for m in TOOL_MODULES if m != "_units"))
    with pytest.raises(RuntimeError, match="_units, which is not staged"):
        _staging.check_closure(_staging.TOOL_MODULES)
    assert not set(TOOL_MODULES) & set(NEVER_STAGED)


PROBE = b"""import json, os, sys
found = []
for base, dirs, names in os.walk("."):
    found += [os.path.relpath(os.path.join(base, n), ".") for n in names]
importable = {}
for name in ("engine", "launchers", "tinker", "modal"):
    try:
        __import__(name)
        importable[name] = True
    except ImportError:
        importable[name] = False
sys.stdout.write(json.dumps({"type": "probe", "env": dict(os.environ), "files": sorted(found),
                             "importable": importable}) + "\\n")
sys.stdout.flush()
"""


def test_the_local_worker_sees_no_secret_and_no_evaluator(monkeypatch):
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    files = dict(stage(engine.Run(engine.generate("FUND_03", 1)).packet()), **{"worker.py": PROBE})
    worker = LocalSandbox().start(files, 30)
    try:
        probe = worker.channel.receive(30)
    finally:
        worker.close()
    assert probe["type"] == "probe"
    assert not any(v in json.dumps(probe["env"]) for v in SECRETS.values())
    assert set(probe["env"]) <= set(LocalSandbox().worker_env_keys()) | {"LC_CTYPE"}
    assert probe["importable"] == {"engine": False, "launchers": False, "tinker": False, "modal": False}
    assert probe["files"] == sorted(files)


class SpySandbox(LocalSandbox):
    """The local sandbox, keeping every message the host sends to the worker."""

    sent = []

    def start(self, files, time_limit_s):
        worker = super().start(files, time_limit_s)
        send = worker.channel.send

        def spy(obj):
            SpySandbox.sent.append(obj)
            send(obj)

        worker.channel.send = spy
        return worker


def test_a_whole_attempt_leaks_no_key_and_no_gold(monkeypatch, run_attempt):
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    SpySandbox.sent = []
    record, out = run_attempt(sandbox=SpySandbox(), family="FUND_03", horizon=20)
    assert record["content"]["termination"]["status"] == "completed"
    sent = json.dumps(SpySandbox.sent)
    for needle in ("gold_report", '"events"', "approval_policy", "reference_actions"):
        assert needle not in sent
    instance = engine.generate("FUND_03", 1)
    for msg in SpySandbox.sent:
        packet = msg.get("packet")
        if packet:
            for source in instance["sources"]:
                if source["published_day"] > packet["day"]:
                    assert source["text"] not in json.dumps(packet)
    for name in os.listdir(out):
        with open(os.path.join(out, name), encoding="utf-8") as fh:
            text = fh.read()
        for value in SECRETS.values():
            assert value not in text, (name, value)
    assert set(record["content"]["information_boundary"]["worker_env_keys"]).isdisjoint(SECRETS)


def test_every_never_staged_name_is_a_path_that_exists(run_attempt):
    """Held back: records named `engine/cli` as never staged, a module that had moved to fundbook/cli."""
    from launchers._staging import NEVER_STAGED_PATHS
    from .conftest import REPO

    record, _ = run_attempt(horizon=6)
    names = record["content"]["information_boundary"]["never_staged"]
    assert names == list(NEVER_STAGED_PATHS) and "fundbook/cli" in names and "engine/cli" not in names
    for name in names:
        assert os.path.exists(os.path.join(REPO, name + ".py")) or os.path.isdir(os.path.join(REPO, name)), name
