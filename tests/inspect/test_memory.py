"""Peak memory of `fundbook inspect import`, `fundbook inspect verify` and the `inspect:` sweep arm, each measured
in a fresh process (getrusage(RUSAGE_CHILDREN) of a wrapper that runs only that command: its largest resident set,
its Pyodide runtime included), on a normal log and on hostile ones at the limits (launchers/inspect/bench.py builds
them; `make bench-inspect` prints the same figures): every one stays under 512 MiB, and every hostile one is
refused in one line naming the file."""

import os

import pytest

from launchers.inspect import bench

from . import policies as P

pytestmark = P.WARNINGS + [pytest.mark.pyodide]
LIMIT_MIB = 512


def _ok(got, rc, start=None):
    last = (got["err"] or got["out"]).strip().splitlines()[-1:] or [""]
    print(f"\npeak {got['peak_mib']:.1f} MiB, exit {got['rc']}: {last[0][:160]}")
    assert got["rc"] == rc, got
    assert got["peak_mib"] < LIMIT_MIB, got
    assert "Traceback" not in got["err"], got["err"]
    if start is not None:
        assert last[0].startswith(start), last


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    return root, {name: bench.write_case(str(root), name) for name in bench.HOSTILE}


def test_a_normal_log_imports_and_verifies_under_the_bound(tmp_path):
    _ok(bench.run_import(bench.BASE_LOG, str(tmp_path)), 0)
    _ok(bench.run_verify(str(tmp_path / "imported")), 0, "inspect attempts: 1 of 1 verify")


def test_a_zstd_bomb_is_refused_by_import_verify_and_the_arm_under_the_bound(tmp_path, hostile):
    root, paths = hostile
    path = paths["zstd-bomb"]
    assert os.path.getsize(path) < 100_000  # 1 GiB once expanded
    _ok(
        bench.run_import(path, str(tmp_path)),
        1,
        f"error: {path}: zip member 'header.json' expands past the 4096 bytes it declares (stopped at 1048576; a "
        f"decompression bomb)",
    )
    _ok(bench.run_verify(bench.hand_placed(str(tmp_path), path)), 1, "inspect attempts: 0 of 1 verify")
    _ok(bench.run_arm(path, str(tmp_path)), 1, f"error: inspect:{path}: zip member 'header.json' expands past")


def test_a_log_at_the_unpacked_limit_is_read_under_the_bound(tmp_path, hostile):
    """Inspect parses all of it (valid JSON) before the importer refuses its 64 MiB model answer."""
    _, paths = hostile
    _ok(
        bench.run_import(paths["eval-at-limit"], str(tmp_path)),
        1,
        f"error: {paths['eval-at-limit']}: sample FUND_03-seed-1: transcript: message 2: over 1048576 bytes of text",
    )


@pytest.mark.long
@pytest.mark.parametrize("case", sorted(bench.HOSTILE))
@pytest.mark.parametrize("command", ["import", "verify", "arm"])
def test_every_hostile_log_under_every_command_stays_under_the_bound(tmp_path, hostile, case, command):
    _, paths = hostile
    path = paths[case]
    got = {
        "import": lambda: bench.run_import(path, str(tmp_path)),
        "verify": lambda: bench.run_verify(bench.hand_placed(str(tmp_path), path)),
        "arm": lambda: bench.run_arm(path, str(tmp_path)),
    }[command]()
    _ok(got, 1)


@pytest.mark.long
def test_the_normal_log_through_the_arm_stays_under_the_bound(tmp_path):
    _ok(bench.run_arm(bench.BASE_LOG, str(tmp_path)), 0)
