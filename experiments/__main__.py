"""`python -m experiments build|recompute|verify|calibrate|bench`: the shipped experiments' stages."""

import click

from builders import StageGroup


def _stage_errors(fn):
    def wrapped(*args, **kwargs):
        from builders import BuildError
        from .errors import ExperimentError

        try:
            return fn(*args, **kwargs)
        except ExperimentError as exc:
            raise BuildError(exc.message) from None

    wrapped.__name__, wrapped.__doc__ = fn.__name__, fn.__doc__
    return wrapped


def _summary(checks):
    for name, s in checks["sweeps"].items():
        click.echo(
            f"experiments: {name}: {s['rows']} rows, evaluator {s['evaluator_id'][:16]} "
            f"({'committed rows reused' if s['reused'] else 'recomputed'})"
        )
    r = checks["recheck"]
    click.echo(
        f"experiments: re-checked {r['tasks']} sampled items (seed {r['seed']}) on host CPython and in "
        f"Pyodide {r['pyodide_version']}: identical to the committed rows"
    )
    for name, d in checks["comparisons"].items():
        click.echo(
            f"experiments: {name}: {d['verdict']} ({d['confidence']}) by {d['method']} at n {d['n']}, evidence verified"
        )
    p = checks["decisions_in_pyodide"]
    click.echo(
        f"experiments: {p['decisions']} decisions recomputed by experiments/rules.py in Pyodide "
        f"{p['pyodide_version']}: every figure identical"
    )
    c = checks["certificate"]
    click.echo(f"experiments: grader certificate {'PASSED' if c['passed'] else 'FAILED'}: {c['met']} of {c['checked']}")


@click.group(cls=StageGroup)
def main():
    """The shipped comparisons and the grader certificate."""


@main.command()
@_stage_errors
def build():
    """Reuse matching committed rows (else recompute), re-check a fresh sample, decide, certify."""
    from .shipped import build as run

    _summary(run())


@main.command()
@_stage_errors
def recompute():
    """Recompute every shipped sweep from scratch (pilot included), then decide and certify."""
    from .shipped import build as run

    _summary(run(recompute=True))


@main.command()
@_stage_errors
def verify():
    """Recompute every shipped sweep in a scratch folder and compare the bytes with runs/."""
    from .shipped import verify as run

    run(log=click.echo)


@main.command()
@click.option("--check", is_flag=True, help="Recompute and compare with the committed file instead of writing it.")
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 64), help="Worker processes.")
@_stage_errors
def calibrate(check, workers):
    """The decision rules' calibration (10,000 null sweeps per rule and shape) and power study, seeded."""
    from .calibration import main as run

    run(check=check, workers=workers, log=lambda m: click.echo(m, err=True))


@main.command()
def bench():
    """Graded items per minute at 1 and 2 workers (baseline arms, reference once per item), and the rules' speed."""
    from .bench import main as run, rules_speed

    run()
    rules_speed()


@main.command("bench-exit")
@click.option("--runs", default=200, show_default=True, type=click.IntRange(1, 10_000))
@click.option(
    "--bare-every",
    default=1,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="Run the bare Parquet reads every N-th round only.",
)
def bench_exit(runs, bare_every):
    """`fundbook compare --verify` N times: every exit clean (beside the bare Parquet reads, old and new)."""
    from .bench import exit_loop

    exit_loop(runs, bare_every)


if __name__ == "__main__":
    main()
