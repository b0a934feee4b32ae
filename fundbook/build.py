"""`python -m fundbook.build`: what `make build` runs in one Pyodide runtime.

builders' stages (bundle, runs, desk stdlib) and then the experiments' stage
(the shipped comparisons and certificate, their sample re-checked in the same
runtime). It lives here, above both layers, so builders never imports the
experiment layer; `python -m builders.runs build` is the same build without it.
"""

import click

from builders import StageCommand
from builders import BuildError
from builders.runs import Stage, build_options, run_build


def _experiments(session, out, bundle_dir, echo):
    from experiments import shipped
    from experiments.errors import ExperimentError

    try:
        checks = shipped.build(runs_dir=out, bundle_dir=bundle_dir, session=session, log=echo)
    except ExperimentError as exc:
        raise BuildError(exc.message) from None
    echo(
        f"experiments: {len(checks['comparisons'])} comparisons decided and verified, certificate "
        f"{'passed' if checks['certificate']['passed'] else 'FAILED'} ({checks['certificate']['met']} of "
        f"{checks['certificate']['checked']}); sample re-checked on host and in Pyodide"
    )


@click.command(cls=StageCommand)
@build_options
@click.option(
    "--experiments/--no-experiments",
    "with_experiments",
    default=True,
    show_default=True,
    help="Then build the shipped comparisons and certificate (experiments/), re-checking their sample "
    "in the same runtime.",
)
def main(with_experiments, **options):
    """The bundle, the runs, the desk's stdlib and the experiments, in one Pyodide runtime."""
    run_build([Stage("build-experiments", _experiments)] if with_experiments else [], **options)


if __name__ == "__main__":
    main()
