"""Fabricated model attempts for the board's tests: the published mock attempt re-dressed as another sampler's,
on a world of FUND_01, with the weights a path records (the local sampler's `sampling.model_sha256`, a local
server's served name, an Inspect log's base URL). Until the register holds a second model, the tests build one
here: SmolLM2 and Gemma 3 270M (the base model) by their packaged sha256s."""

import json
import shutil
from pathlib import Path

import engine
from builders.site import weights
from tests.site.host_records import write_host_runs

REPO = Path(__file__).resolve().parents[2]
MOCK = REPO / "runs" / "attempts" / "mock-FUND_01-seed-1"
BASELINES = [f"baseline-FUND_01-seed-{s}-{p}" for s in (1, 2) for p in ("do-nothing", "reference", "shortest-cheapest")]
SMOL = weights.packaged()["smollm2-135m-instruct"]
GEMMA = weights.packaged()["gemma3-270m"]


def seal(path: Path, record: dict):
    record["content_sha256"] = engine.content_sha256(record["content"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1))


def attempt(
    runs: Path,
    attempt_id: str,
    *,
    seed: int,
    points,
    started: str,
    model_id: str,
    sha=None,
    provider="llama-cpp",
    served=None,
    harness=None,
    base_url=None,
) -> dict:
    """Write runs/attempts/<attempt_id>/ and return its record. `points` None: interrupted, nothing accepted."""
    record = json.loads((MOCK / "record.json").read_text())
    c = record["content"]
    c["task"] = dict(
        c["task"],
        seed=seed,
        instance_id=f"FUND_01/seed-{seed}",
        fixture_sha256=engine.fixture_sha256(engine.generate("FUND_01", seed)),
    )
    c["proposals"] = []
    c["attempt_id"], c["label"] = attempt_id, None
    c["model"] = {"id": model_id, "provider": provider}
    c["sampling"] = dict(c.get("sampling") or {})
    if sha:
        c["sampling"]["model_sha256"] = sha
    if served:
        c["sampling"]["local_server"] = 1
        c["service"] = {"model_reported": [served], "provider": provider}
    if harness:
        c["harness"] = harness
        c["inspect"] = {"model_base_url": base_url, "created": started}
    c["cost"] = dict(c["cost"], micro_usd=0, cpu_ms=1000)
    if points is None:
        c["result"] = None
        c["termination"] = {"limit": "time", "reason": "worker time limit", "status": "interrupted"}
    else:
        c["result"] = dict(
            c["result"],
            verdict="QUALIFIED" if points >= 90 else "NOT_QUALIFIED",
            score=dict(c["result"]["score"], points=points),
        )
    record["volatile"] = dict(record["volatile"], started=started)
    folder = runs / "attempts" / attempt_id
    folder.mkdir(parents=True)
    shutil.copyfile(MOCK / "transcript.json", folder / "transcript.json")
    seal(folder / "record.json", record)
    return record


# (seed, SmolLM2's points, Gemma's points): the base model scores lower on every world but one
WORLDS = list(
    zip(
        range(1, 16),
        [34, 28, 41, 30, 25, 38, 33, 29, 36, 31, 27, 40, 35, 32, 30],
        [12, 9, 15, 31, 8, 10, 14, 6, 11, 13, 7, 12, 9, 16, 10],
    )
)


def two_models(runs: Path) -> Path:
    """Baseline runs on FUND_01 seeds 1-2, SmolLM2 on fifteen worlds in process (llama-cpp, its sha256 recorded) and on
    one behind a local server (known by its served name), Gemma 3 270M on the same fifteen (its sha256 recorded)."""
    write_host_runs(runs, BASELINES)
    for i, (seed, smol, gemma) in enumerate(WORLDS):
        attempt(
            runs,
            f"smol-FUND_01-seed-{seed}",
            seed=seed,
            points=smol,
            started=f"2026-12-{i + 1:02d}T08:00:00Z",
            model_id="SmolLM2-135M-Instruct.Q4_1",
            sha=SMOL["sha256"],
        )
        attempt(
            runs,
            f"gemma-FUND_01-seed-{seed}",
            seed=seed,
            points=gemma,
            started=f"2026-12-{i + 1:02d}T09:00:00Z",
            model_id="gemma-3-270m-q4_k_m",
            sha=GEMMA["sha256"],
        )
    attempt(
        runs,
        "smol-server-FUND_01-seed-1",
        seed=1,
        points=33,
        started="2026-12-20T08:00:00Z",
        model_id="SmolLM2-135M-Instruct.Q4_1",
        provider="openai-compatible",
        served="SmolLM2-135M-Instruct.Q4_1",
    )
    return runs
