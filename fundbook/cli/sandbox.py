"""`fundbook-launch sandbox ...`: the worker's Modal sandbox without inference (build, launch, status,
exec-worker, checkpoint, resume, stop)."""

import click

from launchers import DEFAULT_HORIZON, format_usd, load_prices

from ._launch_options import CAP, CHECKPOINTS, SECONDS, SEED, prices_option


@click.group()
def sandbox():
    """The worker's Modal sandbox, without inference: build, launch, status, exec-worker, checkpoint, resume, stop."""


record_option = click.option(
    "--record",
    "record_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="The transport record (fundbook.sandbox/1).",
)


@sandbox.command("build")
@click.option("--python", "python_version", default="3.11", show_default=True)
def sandbox_build(python_version):
    """Build the worker image (debian slim with Python; nothing else is installed)."""
    from launchers import transport

    out = transport.build_image(python_version=python_version)
    click.echo(f"image {out['image_id']} (python {out['python_version']})")


FIXTURE_NAMES = ("echo", "tools")  # launchers/_proofs.py


@sandbox.command("launch")
@record_option
@click.option("--family", required=True)
@click.option("--seed", type=SEED, required=True)
@click.option("--horizon", type=CHECKPOINTS, default=DEFAULT_HORIZON, show_default=True)
@click.option(
    "--timeout", "timeout_s", type=SECONDS, default=1200, show_default=True, help="The sandbox's lifetime (s)."
)
@click.option("--cap-micro-usd", type=CAP, required=True, help="The compute cap for this sandbox.")
@click.option(
    "--fixture",
    type=click.Choice(FIXTURE_NAMES),
    default=None,
    help="Stage a deterministic proof fixture (echo: the staged files; tools: the calculation tools).",
)
@prices_option
def sandbox_launch(record_path, family, seed, horizon, timeout_s, cap_micro_usd, fixture, prices):
    """Create a network-blocked sandbox holding the worker and the first packet (no model, no claim)."""
    from launchers import Task, transport

    doc = transport.launch(
        record_path, Task(family, seed, horizon=horizon), timeout_s, cap_micro_usd, load_prices(prices), fixture=fixture
    )
    click.echo(
        f"sandbox {doc['sandbox_id']} in app {doc['app_name']} ({doc['app_id']}), up to "
        f"{format_usd(doc['max_micro_usd'])} -> {record_path}"
    )


@sandbox.command("status")
@record_option
def sandbox_status(record_path):
    """Whether the sandbox runs, or its exit code."""
    from launchers import transport

    s = transport.status(record_path)
    state = "running" if s["running"] else f"exited {s['exit_code']}"
    click.echo(
        f"sandbox {s['sandbox_id']}: {state}; {s['checkpoints']} checkpoints"
        + (f"; stopped {s['stopped']['at']}" if s["stopped"] else "")
    )


@sandbox.command("exec-worker", context_settings={"ignore_unknown_options": True})
@record_option
@click.option("--timeout", "timeout_s", type=SECONDS, default=600, show_default=True)
@click.option(
    "--fixture",
    type=click.Choice(FIXTURE_NAMES),
    default=None,
    help="Run the proof fixture staged at launch and compare its output with the host's.",
)
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def sandbox_exec(record_path, timeout_s, fixture, argv):
    """Run a command in the sandbox (after --) and print its output; exit 0 only if it exited 0.

    With --fixture NAME: run the proof fixture and exit 0 only if its output is, byte for byte, the host's."""
    from launchers import transport

    if fixture is not None:
        if argv:
            raise click.UsageError("--fixture runs the staged fixture: give no command after --")
        got = transport.run_fixture(record_path, fixture, timeout_s)
        click.echo(
            f"fixture {fixture}: {'proof matches' if got['matches'] else 'MISMATCH'} (exit {got['exit_code']}, "
            f"output sha256 {str(got['sha256'])[:12]}, expected {got['expected_sha256'][:12]})"
        )
        if not got["matches"] and got["stderr"]:
            click.echo(got["stderr"], err=True, nl=not got["stderr"].endswith("\n"))
        return 0 if got["matches"] else 1
    out, err, code = transport.exec_worker(record_path, list(argv), timeout_s)
    if out:
        click.echo(out, nl=not out.endswith("\n"))
    if err:
        click.echo(err, err=True, nl=not err.endswith("\n"))
    click.echo(f"exit {code}", err=True)
    return 0 if code == 0 else 1


@sandbox.command("checkpoint")
@record_option
def sandbox_checkpoint(record_path):
    """Snapshot the sandbox's filesystem (retained work included) into an image."""
    from launchers import transport

    entry = transport.checkpoint(record_path)
    click.echo(f"checkpoint image {entry['image_id']} at {entry['at']}")


@sandbox.command("resume")
@record_option
@click.option("--new-record", required=True, type=click.Path(dir_okay=False), help="The new transport record.")
@click.option("--timeout", "timeout_s", type=SECONDS, default=1200, show_default=True)
@click.option("--cap-micro-usd", type=CAP, required=True, help="The compute cap for the new sandbox.")
@prices_option
def sandbox_resume(record_path, new_record, timeout_s, cap_micro_usd, prices):
    """Start a new sandbox from the last checkpoint; write a new record linked to the old one."""
    from launchers import transport

    doc = transport.resume(record_path, new_record, timeout_s, cap_micro_usd, load_prices(prices))
    click.echo(f"sandbox {doc['sandbox_id']} from {doc['resumed_from']['image_id']} -> {new_record}")


@sandbox.command("stop")
@record_option
def sandbox_stop(record_path):
    """Terminate the sandbox and stop the app the launcher created; exit 1 (and no `stopped`) unless both were
    reached."""
    from launchers import transport

    out = transport.stop(record_path)
    click.echo(f"sandbox terminated: {out['sandbox_terminated']}; app stopped: {out['app_stopped']}")
