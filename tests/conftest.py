"""Shared test fixtures. Paid tests (tinker, modal) run only with --run-paid."""

import os

import pytest


def pytest_addoption(parser):
    parser.addoption("--run-paid", action="store_true", default=False,
                     help="run tests that call tinker or modal for real (costs money; needs keys)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-paid"):
        return
    skip = pytest.mark.skip(reason="paid test: pass --run-paid to run it")
    for item in items:
        if "paid" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
