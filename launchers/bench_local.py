"""`make bench-local`: the local sampler's figures, side by side (printed, never asserted).

- the build: the CPU features llama.cpp was compiled for, and whether it uses this CPU's AVX2;
- one call: the largest day-1 desk view of the four families (FUND_04 seed 1), under its grammar: prompt and
  answer tokens, wall and CPU time, tokens per second, and where its CPU went (prompt evaluation, decoding,
  sampling under the grammar, compiling the grammar);
- grammar first: the same call decoded with the grammar applied to the whole vocabulary at every token (the
  library's chain, the old path) and with the best token checked first (launchers/_llama_grammar_first.py),
  alternately: CPU of each, new over old, and whether the answers are byte-identical;
- determinism: the same call in fresh processes at thread counts (1, 1), (1, 2), (2, 2), twice each, and
  whether the answers are byte-identical (sha256 of the text);
- the prefix store, old path beside new: short attempts (FUND_03 seed 1, three checkpoints) run alternately
  without the store (every attempt's first call evaluates the system turn) and with it, in this process: CPU
  per call from each ledger -- an attempt's first call (the first attempt's, then later attempts') and its
  later calls, minimum and median, new over old -- and whether every attempt's answers, tokens and recorded
  cache hits (its cache.jsonl) are byte-identical;
- every published local-model attempt from its record (CPU from the ledger, wall from the record's volatile
  part): per call and per attempt.

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
STORE_ATTEMPTS = 2  # attempts a path: the first attempt's first call, then a later attempt's
STORE_WORLD = ("FUND_03", 1, 3)  # family, seed, checkpoints
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


def one_call(model_file, threads=1, threads_batch=2, phases=None):
    """(completion, wall s, CPU s, load wall s) of one day-1 call in this process. `phases`, a dict, receives
    the CPU seconds and tokens of each phase: prompt evaluation, decoding one token at a time, sampling
    (grammar and greedy), and compiling the grammar (timed on its own)."""
    from ._provider import SamplerOptions
    from ._sampler_llama import LlamaCpp, LlamaSampler, settings_for

    t0 = time.perf_counter()
    identity = LlamaCpp(SamplerOptions(own={"model_file": model_file})).identity  # a GGUF, or a packaged model
    sampler = LlamaSampler("bench", identity, settings_for(identity, n_threads=threads, n_threads_batch=threads_batch))
    load = time.perf_counter() - t0
    prepared = sampler.prepare(day_one(), 1024)
    if phases is not None:
        _count_phases(sampler, prepared, phases)
    c0, w0 = time.process_time(), time.perf_counter()
    try:
        completion = sampler.sample(prepared, 3600)
    finally:
        vars(sampler.llm).pop("eval", None), vars(sampler.llm).pop("sample", None)  # the class's own again
    return completion, time.perf_counter() - w0, time.process_time() - c0, load


def _count_phases(sampler, prepared, phases):
    """Wraps this sampler's model's `eval` and `sample` (instance attributes: `generate` looks them up there)."""
    llm = sampler.llm

    def timed(name, fn, count):
        def wrapper(*args, **kwargs):
            c0 = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                phases[name] = phases.get(name, 0) + time.process_time() - c0
                phases[name + " n"] = phases.get(name + " n", 0) + count(args)

        return wrapper

    real_eval = llm.eval
    llm.eval = lambda tokens: timed("prompt" if len(tokens) > 1 else "decode", real_eval, lambda a: len(a[0]))(tokens)
    llm.sample = timed("sample", llm.sample, lambda a: 1)
    c0 = time.process_time()
    sampler.lib.LlamaGrammar.from_json_schema(json.dumps(prepared.payload["schema"]), verbose=False)
    phases["grammar"] = time.process_time() - c0


def build_line(model_file):
    """The CPU features llama.cpp was compiled for, and a warning when it leaves this CPU's AVX2 unused."""
    from ._sampler_llama import library, versions

    info = versions(library())["system_info"]
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            has_avx2 = " avx2" in fh.read()
    except OSError:
        has_avx2 = False
    features = [f.split("=")[0].strip() for f in info.replace("CPU :", "").split("|") if f.strip().endswith("= 1")]
    line = f"{'library built for':<44}{' '.join(features) or info}"
    if has_avx2 and "AVX2 = 1" not in info:
        line += (
            "\n  (this CPU has AVX2, the library uses none of it: llama.cpp turns GGML_NATIVE off when "
            "SOURCE_DATE_EPOCH is set while it compiles)"
        )
    return line


def fresh(model_file, threads, threads_batch):
    """The same call in a fresh interpreter: the sha256 of its answer, and its figures."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "launchers.bench_local",
            "--model-file",
            model_file,
            "--one-call",
            "--threads",
            str(threads),
            "--threads-batch",
            str(threads_batch),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if out.returncode != 0:
        raise SystemExit(f"bench-local: the fresh process failed: {out.stderr.strip()[-300:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def short_attempt(model_file, family="FUND_03", seed=1, horizon=2):
    """(record, wall s, CPU s, the attempt's cache.jsonl bytes) of one attempt in this process."""
    from . import _providers
    from ._attempt import execute
    from ._claims import Grant, authorise
    from ._controller import Limits
    from ._prices import load_prices
    from ._provider import SamplerOptions
    from ._spec import AttemptSpec, Places, Task

    build = _providers.sampler(
        "llama-cpp", SamplerOptions(call_deadline_s=600, temperature_milli=0, seed=0, own={"model_file": model_file})
    )
    with tempfile.TemporaryDirectory() as root:
        claim = os.path.join(root, "claim.json")
        authorise(
            claim,
            family,
            "public-practice",
            build.model_id,
            0,
            10**7,
            1,
            grant=Grant(state=os.path.join(root, "s"), local=True, project=os.path.join(root, "project")),
        )
        c0, w0 = time.process_time(), time.perf_counter()
        record = execute(
            AttemptSpec(
                claim=claim,
                out=os.path.join(root, "a"),
                task=Task(family, seed, horizon=horizon),
                model=build.model_id,
                sampler=build,
                sandbox=_providers.sandbox("local"),
                prices=load_prices(),
                limits=Limits(3600, 600, 1024, 60),
                places=Places(os.path.join(root, "s"), os.path.join(root, "project")),
            )
        )
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        with open(os.path.join(root, "a", "cache.jsonl"), "rb") as fh:
            return record, wall, cpu, fh.read()


def store_paths(model_file):
    """{"old": [...], "new": [...]}: per attempt, the CPU ms of each call (from its ledger) and its cache.jsonl,
    the two paths alternating (so a load change on a shared machine falls on both), the store empty at first."""
    from . import _sampler_llama

    runs = {"old": [], "new": []}
    _sampler_llama._PREFIXES.clear()
    try:
        for _ in range(STORE_ATTEMPTS):
            for path in ("old", "new"):
                _sampler_llama.PREFIX_STORE = path == "new"
                record, wall, cpu, cache = short_attempt(model_file, *STORE_WORLD)
                calls = [
                    e["cpu_ms"]
                    for e in record["content"]["ledger"]["entries"]
                    if e["kind"] == "charge" and e["account"] == "inference"
                ]
                runs[path].append({"calls": calls, "cache": cache, "record": record, "wall": wall, "cpu": cpu})
    finally:
        _sampler_llama.PREFIX_STORE = True
    return runs


def grammar_first_lines(model_file, rounds=2):
    """The day-1 call decoded the library's way (the grammar over the whole vocabulary at every token) and
    grammar-first (launchers/_llama_grammar_first.py), alternately in this process: CPU of each, new over old,
    and whether the answers are byte-identical."""
    from . import _sampler_llama

    cpu, texts = {"old": [], "new": []}, set()
    try:
        for _ in range(rounds):
            for path in ("old", "new"):
                _sampler_llama.GRAMMAR_FIRST = path == "new"
                c, _wall, used, _load = one_call(model_file)
                cpu[path].append(used)
                texts.add((c.text, c.tokens_out))
    finally:
        _sampler_llama.GRAMMAR_FIRST = True
    old, new = min(cpu["old"]), min(cpu["new"])
    return [
        f"{'grammar first, day-1 call: old path':<44}{old * 1000:>13.0f} ms CPU (best of {rounds}: the grammar "
        f"checks every token of the vocabulary)",
        f"{'  new path (the best token checked first)':<44}{new * 1000:>13.0f} ms CPU ({new / old:.2f}x of old); "
        f"answers {'identical' if len(texts) == 1 else 'DIFFER'}",
    ]


def _spread(values):
    return f"{min(values):,} / {_median(values):,}" if values else "-"


def store_lines(runs):
    """The old path beside the new: CPU ms a call, an attempt's first call and its later calls."""
    rows = [
        ("first call of the first attempt", lambda rs: [rs[0]["calls"][0]]),
        ("first call of later attempts", lambda rs: [r["calls"][0] for r in rs[1:]]),
        ("later calls", lambda rs: [c for r in rs for c in r["calls"][1:]]),
    ]
    family, seed, days = STORE_WORLD
    out = [
        f"{'prefix store: %d attempts a path, %s/%d' % (STORE_ATTEMPTS, family, seed):<44}"
        f"{'old (min / median)':>22}{'new (min / median)':>22}{'new/old':>9}   CPU ms a call, {days} checkpoints "
        f"an attempt, the store empty at first"
    ]
    for label, pick in rows:
        old, new = pick(runs["old"]), pick(runs["new"])
        ratio = f"{_median(new) / _median(old):.2f}x" if old and new and _median(old) else "-"
        out.append(f"{'  ' + label + ' (n=%d)' % len(old):<44}{_spread(old):>22}{_spread(new):>22}{ratio:>9}")
    caches = {r["cache"] for rs in runs.values() for r in rs}
    same = "identical" if len(caches) == 1 else "DIFFER"
    out.append(f"{'  answers, tokens, cache hits (cache.jsonl)':<44}{same:>22}   (every attempt of both paths)")
    return out


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
        print(
            json.dumps(
                {
                    "sha256": hashlib.sha256(c.text.encode("utf-8")).hexdigest(),
                    "tokens_in": c.tokens_in,
                    "tokens_out": c.tokens_out,
                    "wall_s": wall,
                    "cpu_s": cpu,
                    "load_s": load,
                }
            )
        )
        return 0
    print(
        f"{'local sampler (llama-cpp)':<44}{'figure':>16}   load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores"
    )
    print(build_line(args.model_file))
    phases = {}
    c, wall, cpu, load = one_call(args.model_file, phases=phases)
    base_call = wall
    print(f"{'model load (inspect + load)':<44}{load * 1000:>13.0f} ms")
    print(
        f"{'one call, FUND_04/1 day 1 (1/2 threads)':<44}{wall * 1000:>13.0f} ms  wall, {cpu * 1000:.0f} ms CPU; "
        f"{c.tokens_in} prompt + {c.tokens_out} answer tokens ({c.tokens_in / wall:.0f} + {c.tokens_out / wall:.0f} "
        f"tok/s of wall)"
    )
    per = {k: phases.get(k, 0) * 1000 / max(phases.get(k + " n", 0), 1) for k in ("prompt", "decode")}
    print(
        f"{'  where its CPU went':<44}{phases.get('prompt', 0) * 1000:>13.0f} ms  prompt evaluation "
        f"({per['prompt']:.1f} ms a token), {phases.get('decode', 0) * 1000:.0f} ms decoding ({per['decode']:.1f} ms "
        f"a token), {phases.get('sample', 0) * 1000:.0f} ms sampling under the grammar, "
        f"{phases.get('grammar', 0) * 1000:.0f} ms compiling the grammar"
    )
    for line in grammar_first_lines(args.model_file):
        print(line)
    if not args.quick:
        runs = {t: [fresh(args.model_file, *t) for _ in range(2)] for t in THREADS}
        shas = {t: {r["sha256"] for r in rs} for t, rs in runs.items()}
        base = runs[(1, 2)][0]["wall_s"]
        for t, rs in runs.items():
            same = "identical" if len(shas[t]) == 1 else "DIFFER"
            print(
                f"{'  fresh processes, threads %d/%d' % t:<44}{rs[0]['wall_s'] * 1000:>13.0f} ms  "
                f"({rs[0]['wall_s'] / base:.2f}x of 1/2), CPU {rs[0]['cpu_s'] * 1000:.0f} ms; answers {same} "
                f"({sorted(shas[t])[0][:12]})"
            )
        every = set().union(*shas.values())
        print(f"{'  across all thread counts':<44}{'identical' if len(every) == 1 else 'DIFFER':>16}")
    runs = store_paths(args.model_file)
    for line in store_lines(runs):
        print(line)
    first = runs["new"][0]
    cost, wall, cpu = first["record"]["content"]["cost"], first["wall"], first["cpu"]
    print(
        f"{'short attempt, %s/%d, %d checkpoints' % STORE_WORLD:<44}{wall * 1000:>13.0f} ms  wall, "
        f"{cpu * 1000:.0f} ms CPU; {cost['calls']} calls, {wall / max(cost['calls'], 1) * 1000:.0f} ms a call "
        f"({wall / max(cost['calls'], 1) / (base_call or 1):.2f}x of the day-1 call)"
    )
    for r in published(args.attempts):
        rc, vol = r["content"], r["volatile"]
        calls = list(vol.get("calls_ms") or [])
        print(
            f"{'published ' + rc['attempt_id'][:34]:<44}{vol['duration_ms']:>13.0f} ms  wall, "
            f"{rc['cost'].get('cpu_ms', 0)} ms CPU; {rc['cost']['calls']} calls ({rc['settled_days']} checkpoints "
            f"settled), median call {_median(calls)} ms wall, {rc['cost'].get('cpu_ms', 0) // max(rc['cost']['calls'], 1)}"
            f" ms CPU"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
