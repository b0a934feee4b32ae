"""The launcher docs cannot drift: every command, option and make target is in launchers/README.md."""

import os
import re

from fundbook.cli.launch import cli

from .conftest import REPO

with open(os.path.join(REPO, "launchers", "README.md"), encoding="utf-8") as fh:
    README = fh.read()


def test_every_command_and_option_is_documented():
    for name, command in cli.commands.items():
        assert f"`{name}" in README, name
        for param in command.params:
            for opt in param.opts:
                if opt.startswith("--") and opt != "--help":
                    assert opt in README, f"{name} {opt}"


def test_every_make_target_is_documented():
    with open(os.path.join(REPO, "mk", "launchers.mk"), encoding="utf-8") as fh:
        targets = re.findall(r"^([a-z][a-z-]+):", fh.read(), flags=re.M)
    assert targets
    for target in targets:
        assert f"make {target}" in README, target


def test_every_termination_status_is_documented():
    import json

    with open(os.path.join(REPO, "launchers", "schemas", "attempt.schema.json")) as fh:
        schema = json.load(fh)
    statuses = schema["properties"]["content"]["properties"]["termination"]["properties"]["status"]["enum"]
    for status in statuses:
        assert f"`{status}`" in README, status
