"""`python -m experiments build|recompute|verify|bench`: the shipped experiments' stages."""

import click

from builders._cli import StageGroup


def _stage_errors(fn):
    def wrapped(*args, **kwargs):
        from builders._errors import BuildError
        from .errors import ExperimentError
        try:
            return fn(*args, **kwargs)
        except ExperimentError as exc:
            raise BuildError(exc.message) from None
    wrapped.__name__, wrapped.__doc__ = fn.__name__, fn.__doc__
    return wrapped


def _summary(checks):
    for name, s in checks["sweeps"].items():
        click.echo(f"experiments: {name}: {s['rows']} rows, evaluator {s['evaluator_id'][:16]} "
                   f"({'committed rows reused' if s['reused'] else 'recomputed'})")
    r = checks["recheck"]
    click.echo(f"experiments: re-checked {r['tasks']} sampled items (seed {r['seed']}) on host CPython and in "
               f"Pyodide {r['pyodide_version']}: identical to the committed rows")
    for name, d in checks["comparisons"].items():
        click.echo(f"experiments: {name}: {d['verdict']} ({d['confidence']}), evidence verified")
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
def bench():
    """Graded items per minute at 1 and 2 workers (baseline arms, reference once per item)."""
    from .bench import main as run
    run()


if __name__ == "__main__":
    main()
