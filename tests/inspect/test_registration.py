"""inspect_fundbook/desk is found by name through the entry point group inspect_ai, as `inspect eval` finds it."""

from importlib.metadata import entry_points

import pytest

from inspect_ai import eval as inspect_eval

from . import policies as P

pytestmark = P.WARNINGS


def test_entry_point_is_declared():
    eps = {ep.name: ep.value for ep in entry_points(group="inspect_ai")}
    assert eps["inspect_fundbook"] == "inspect_fundbook._registry"


def test_task_runs_by_its_registered_name(tmp_path):
    (log,) = inspect_eval(
        "inspect_fundbook/desk",
        task_args={"worlds": "FUND_03:2", "days": 5},
        model=P.scripted(P.do_nothing),
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success"
    assert log.eval.task == "inspect_fundbook/desk"
    assert str(log.eval.task_version).startswith("0.1.0+")
    (sample,) = log.samples
    assert sample.id == "FUND_03-seed-2"
    assert sample.metadata["world"] == "FUND_03-seed-2" and len(sample.metadata["bundle_sha256"]) == 64
    assert sample.scores["desk_grade"].metadata["status"] == "SCORED"


@pytest.mark.browser
def test_an_eval_runs_in_a_worker_that_holds_a_browser(browser, tmp_path):
    """make test shares one Chromium per worker (Playwright's sync API, which leaves its loop marked running in
    this thread); an Inspect eval in that worker must still run (it failed with "Runner.run() cannot be called
    from a running event loop" before the conftest set the mark aside)."""
    assert browser.is_connected()
    (log,) = inspect_eval(
        "inspect_fundbook/desk",
        task_args={"worlds": "FUND_03:2", "days": 5},
        model=P.scripted(P.do_nothing),
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success" and log.samples[0].scores["desk_grade"].metadata["status"] == "SCORED"
    assert browser.is_connected()  # and the browser is still there for the worker's next test
