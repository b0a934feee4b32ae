"""Fixtures for the experiment layer: the one engine bundle the builders'
tests build (shared across xdist workers), and small sweeps made with it."""

import json
import os

import pytest
from click.testing import CliRunner

from fundbook.cli import cli
from tests.builders.conftest import _shared, bundle_dir, pyodide_test  # noqa: F401  (shared fixtures)

BASELINES = ["baseline:reference", "baseline:shortest-cheapest", "baseline:do-nothing"]


def invoke(*args):
    """Run `fundbook ARGS` in process; (exit code, stdout, stderr)."""
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.stdout, result.stderr


def one_line_error(stderr):
    err = stderr.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    return err


def write_spec(directory, **overrides):
    spec = {
        "version": 1,
        "name": "ref-vs-sc",
        "estimand": "score points, reference minus shortest-cheapest",
        "unit": "items",
        "items": {"split": "practice", "families": ["FUND_01", "FUND_03"], "seeds": "1..3"},
        "arms": {"baseline:reference": 1, "baseline:shortest-cheapest": -1},
        "seeds": [0],
        "metric": "score",
        "bounds": [0, 100],
        "margin": "0",
        "alpha": "0.05",
        "method": "paired_hoeffding",
    }
    spec.update(overrides)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "spec.json"), "w") as fh:
        json.dump(spec, fh, indent=2, sort_keys=True)
    return spec


@pytest.fixture(scope="session")
def practice_study(bundle_dir, tmp_path_factory):
    """A frozen practice comparison, its sweep (6 worlds x 3 baselines, 2 sampled through Pyodide)
    and its decision: built once, copied by the tests that damage it."""
    root = tmp_path_factory.mktemp("study")
    cmp_dir, sweep_dir = root / "cmp", root / "sweep"
    write_spec(cmp_dir)
    assert invoke("compare", cmp_dir, "--freeze")[0] == 0
    code, out, err = invoke(
        "sweep",
        "--out",
        sweep_dir,
        "--family",
        "FUND_01",
        "--family",
        "FUND_03",
        "--seeds",
        "1..3",
        *[a for arm in BASELINES for a in ("--arm", arm)],
        "--bundle",
        bundle_dir,
        "--pyodide-sample",
        2,
        "--comparison",
        cmp_dir,
        "--no-progress",
    )
    assert code == 0, err
    code, out, err = invoke("compare", cmp_dir, "--sweep", sweep_dir)
    assert code == 0, err
    return {"root": root, "cmp": cmp_dir, "sweep": sweep_dir, "bundle": bundle_dir}
