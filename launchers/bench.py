"""Launcher figures, side by side: the mock attempt end to end, the ledger's
cost per call (append + fsync, twice a call), and the controller's overhead per
model call. Printed, never asserted: `make bench-launchers`."""

import os
import tempfile
import time

from . import _providers
from ._attempt import execute
from ._claims import Grant, authorise
from ._controller import Limits
from ._ledger import Ledger
from ._prices import load_prices
from ._spec import AttemptSpec, Places, Task

PRICE = {"input_micro_usd_per_mtok": 130000, "output_micro_usd_per_mtok": 400000}


def mock_attempt(root, n):
    state = os.path.join(root, f"state-{n}")
    claim = os.path.join(root, f"claim-{n}.json")
    project = os.path.join(root, f"project-{n}")
    authorise(claim, "FUND_01", "public-practice", "mock", 0, 20_000_000, 1, grant=Grant(state=state, project=project))
    t0 = time.perf_counter()
    record = execute(
        AttemptSpec(
            claim=claim,
            out=os.path.join(root, f"attempt-{n}"),
            task=Task("FUND_01", 1),
            model="mock",
            sampler=_providers.sampler("mock"),
            sandbox=_providers.sandbox("local"),
            prices=load_prices(),
            limits=Limits(),
            places=Places(state, project),
        )
    )
    return time.perf_counter() - t0, record["content"]["cost"]["calls"]


def main():
    with tempfile.TemporaryDirectory() as root:
        runs = [mock_attempt(root, n) for n in range(3)]
        best, calls = min(runs)
        ledger = Ledger("0" * 64, 10**12, 10**12, PRICE, path=os.path.join(root, "ledger.jsonl"))
        t0 = time.perf_counter()
        for call in range(1, 501):
            ledger.reserve(call, 6000, 2048)
            ledger.settle(call, 6000, 700)
        per_call_ledger = (time.perf_counter() - t0) / 500
    print(f"{'launchers':<34}{'figure':>14}")
    print(f"{'mock attempt FUND_01 seed 1':<34}{best * 1000:>11.0f} ms  (best of 3; {calls} calls, 20 checkpoints)")
    print(f"{'  per model call, end to end':<34}{best / calls * 1000:>11.1f} ms")
    print(f"{'ledger reserve+settle (fsync)':<34}{per_call_ledger * 1000:>11.2f} ms")


if __name__ == "__main__":
    main()
