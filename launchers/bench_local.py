"""`make bench-local`: the local sampler's figures, side by side (printed, never asserted).

- one call: the largest day-1 desk view of the four families (FUND_04 seed 1), under its grammar: prompt and
  answer tokens, wall and CPU time, tokens per second;
- determinism: the same call in fresh processes at thread counts (1, 1), (1, 2), (2, 2), twice each, and
  whether the answers are byte-identical (sha256 of the text);
- one short attempt (FUND_03 seed 1, two checkpoints) end to end, and every published local-model attempt
  from its record (CPU from the ledger, wall from the record's volatile part): per call and per attempt.

CPU time is this process's (every thread), so a busy machine inflates wall time more than CPU time; the
load average is printed with the figures. `--quick` skips the fresh-process determinism runs.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

THREADS = ((1, 1), (1, 2), (2, 2))
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def day_one(family="FUND_04", seed=1):
    """The opening conversation of a world's first checkpoint, as the compact worker builds it."""
    import engine
    from engine import public_salt
    from engine import project
    from launchers.worker import prompt
    instance = engine.generate(family, seed)
    with tempfile.TemporaryDirectory() as tmp:
        history = engine.History(os.path.join(tmp, "desk.sqlite"))
        history.init(instance, instance["horizon"], public_salt(engine.fixture_sha256(instance)))
        packet = history.packet()
    return prompt.messages(packet, project(packet, [], trusted=True)["report"])


def one_call(model_file, threads=1, threads_batch=2):
    """(completion, wall s, CPU s, load wall s) of one day-1 call in this process."""
    from ._sampler_llama import LlamaSampler, inspect_model, settings_for
    t0 = time.perf_counter()
    identity = inspect_model(model_file)
    sampler = LlamaSampler("bench", identity, settings_for(identity, n_threads=threads, n_threads_batch=threads_batch))
    load = time.perf_counter() - t0
    prepared = sampler.prepare(day_one(), 1024)
    c0, w0 = time.process_time(), time.perf_counter()
    completion = sampler.sample(prepared, 3600)
    return completion, time.perf_counter() - w0, time.process_time() - c0, load


def fresh(model_file, threads, threads_batch):
    """The same call in a fresh interpreter: the sha256 of its answer, and its figures."""
    out = subprocess.run([sys.executable, "-m", "launchers.bench_local", "--model-file", model_file, "--one-call",
                          "--threads", str(threads), "--threads-batch", str(threads_batch)],
                         cwd=REPO, capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        raise SystemExit(f"bench-local: the fresh process failed: {out.stderr.strip()[-300:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def short_attempt(model_file):
    from ._attempt import execute
    from ._adapters import make_sampler_factory
    from ._claims import authorise
    from ._controller import Limits
    from ._prices import load_prices
    from ._sandbox_local import LocalSandbox
    build = make_sampler_factory("llama-cpp", None, 600, 0, 0, local={"model_file": model_file})
    with tempfile.TemporaryDirectory() as root:
        claim = os.path.join(root, "claim.json")
        authorise(claim, "FUND_03", "public-practice", build.model_id, 0, 10**7, 1, state=os.path.join(root, "s"),
                  local=True, project=os.path.join(root, "project"))
        c0, w0 = time.process_time(), time.perf_counter()
        record = execute(claim_path=claim, out=os.path.join(root, "a"), family="FUND_03", seed=1,
                         split="public-practice", model=build.model_id, sampler_name="llama-cpp", sandbox_name="local",
                         make_sampler=build, make_sandbox=LocalSandbox, prices=load_prices(),
                         limits=Limits(3600, 600, 1024, 60), horizon=2, state=os.path.join(root, "s"),
                         project=os.path.join(root, "project"), sampling=build.sampling, sandbox_config={"name": "local"})
        return record, time.perf_counter() - w0, time.process_time() - c0


def published(attempts_dir):
    out = []
    for name in sorted(os.listdir(attempts_dir)) if os.path.isdir(attempts_dir) else []:
        path = os.path.join(attempts_dir, name, "record.json")
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as fh:
            record = json.load(fh)
        if record["content"]["model"]["provider"] == "llama-cpp":
            out.append(record)
    return out


def _median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m launchers.bench_local")
    ap.add_argument("--model-file", required=True)
    ap.add_argument("--one-call", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--threads-batch", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="skip the fresh-process determinism runs")
    ap.add_argument("--attempts", default=os.path.join(REPO, "runs", "attempts"))
    args = ap.parse_args(argv)
    if args.one_call:
        c, wall, cpu, load = one_call(args.model_file, args.threads, args.threads_batch)
        print(json.dumps({"sha256": hashlib.sha256(c.text.encode("utf-8")).hexdigest(), "tokens_in": c.tokens_in,
                          "tokens_out": c.tokens_out, "wall_s": wall, "cpu_s": cpu, "load_s": load}))
        return 0
    print(f"{'local sampler (llama-cpp)':<44}{'figure':>16}   load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    c, wall, cpu, load = one_call(args.model_file)
    base_call = wall
    print(f"{'model load (inspect + load)':<44}{load * 1000:>13.0f} ms")
    print(f"{'one call, FUND_04/1 day 1 (1/2 threads)':<44}{wall * 1000:>13.0f} ms  wall, {cpu * 1000:.0f} ms CPU; "
          f"{c.tokens_in} prompt + {c.tokens_out} answer tokens ({c.tokens_in / wall:.0f} + {c.tokens_out / wall:.0f} "
          f"tok/s of wall)")
    if not args.quick:
        runs = {t: [fresh(args.model_file, *t) for _ in range(2)] for t in THREADS}
        shas = {t: {r["sha256"] for r in rs} for t, rs in runs.items()}
        base = runs[(1, 2)][0]["wall_s"]
        for t, rs in runs.items():
            same = "identical" if len(shas[t]) == 1 else "DIFFER"
            print(f"{'  fresh processes, threads %d/%d' % t:<44}{rs[0]['wall_s'] * 1000:>13.0f} ms  "
                  f"({rs[0]['wall_s'] / base:.2f}x of 1/2), CPU {rs[0]['cpu_s'] * 1000:.0f} ms; answers {same} "
                  f"({sorted(shas[t])[0][:12]})")
        every = set().union(*shas.values())
        print(f"{'  across all thread counts':<44}{'identical' if len(every) == 1 else 'DIFFER':>16}")
    record, wall, cpu = short_attempt(args.model_file)
    cost = record["content"]["cost"]
    print(f"{'short attempt, FUND_03/1, 2 checkpoints':<44}{wall * 1000:>13.0f} ms  wall, {cpu * 1000:.0f} ms CPU; "
          f"{cost['calls']} calls, {wall / max(cost['calls'], 1) * 1000:.0f} ms a call "
          f"({wall / max(cost['calls'], 1) / (base_call or 1):.2f}x of the day-1 call)")
    for r in published(args.attempts):
        rc, vol = r["content"], r["volatile"]
        calls = list(vol.get("calls_ms") or [])
        print(f"{'published ' + rc['attempt_id'][:34]:<44}{vol['duration_ms']:>13.0f} ms  wall, "
              f"{rc['cost'].get('cpu_ms', 0)} ms CPU; {rc['cost']['calls']} calls ({rc['settled_days']} checkpoints "
              f"settled), median call {_median(calls)} ms wall, {rc['cost'].get('cpu_ms', 0) // max(rc['cost']['calls'], 1)}"
              f" ms CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
