"""`make bench-providers`: the wall time of one full attempt (20 checkpoints, FUND_01 seed 1) through each provider
path from the command line against the instant stand-in server (tests/launchers/api_standin.py), in each
sandbox it may run in -- the launcher's own overhead per attempt, since the stand-in answers at once.

Timed: `fundbook-launch execute` alone (its preflight, the sandbox check, the claim's consumption, 20 checkpoints
of worker, SDK, HTTP and desk, the record), not the freeze or the claim before it. The paths: openai and
anthropic (paid: local-isolated only, local is refused), openai-compatible with `--local-server` and the mock
(no HTTP; its full prompt makes two calls a checkpoint where the compact prompt of the HTTP samplers makes one),
each in local and local-isolated. Runs interleave the paths, so a busy machine slows all alike.
`RUNS=N` sets the runs per path (default 3)."""

import os
import statistics
import sys
import tempfile

from .api_standin import StandIn
from .provider_runs import attempt, clean_checkout

PATHS = [
    ("openai", "local-isolated"),
    ("anthropic", "local-isolated"),
    ("openai-compatible", "local"),
    ("openai-compatible", "local-isolated"),
    ("mock", "local"),
    ("mock", "local-isolated"),
]


def main(argv=None):
    runs = int(os.environ.get("RUNS") or 3)
    times = {path: [] for path in PATHS}
    calls = {}
    with StandIn() as server, clean_checkout():
        for i in range(runs):
            for provider, sandbox in PATHS:
                with tempfile.TemporaryDirectory(prefix="fundbook-bench-providers-") as folder:
                    done = attempt(server, folder, provider, sandbox=sandbox)
                c = done["record"]["content"]
                assert c["termination"]["status"] == "completed" and c["result"]["score"]["points"] == 100, (
                    provider,
                    sandbox,
                    c["termination"],
                )
                times[(provider, sandbox)].append(done["seconds"])
                calls[(provider, sandbox)] = c["cost"]["calls"]
    print(
        f"one 20-checkpoint attempt (FUND_01 seed 1, the reference play) through `fundbook-launch execute`, "
        f"against the instant stand-in server; {runs} runs a path, interleaved; {os.cpu_count()} cores"
    )
    print(f"{'path':<20} {'sandbox':<15} {'calls':>5} {'median s':>9} {'min s':>7} {'max s':>7}")
    for provider, sandbox in PATHS:
        got = times[(provider, sandbox)]
        print(
            f"{provider:<20} {sandbox:<15} {calls[(provider, sandbox)]:>5} {statistics.median(got):>9.2f} "
            f"{min(got):>7.2f} {max(got):>7.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
