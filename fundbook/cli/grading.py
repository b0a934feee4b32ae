"""`fundbook gold`, `grade`, `mutate` and `families`: the gold candidate, grading, the adverse fixtures and the
practice worlds."""

import os

import click

import engine
from engine import EPISODES, FAMILIES, MUTATION_NOTES, MUTATIONS, MAX_CANDIDATE_BYTES, exit_code_for, load_episode
from engine import load_family_root
from experiments.seeds import seed_param

from ._common import emit_json, json_option, read_json, write_json
from ._render import echo_result


def _fixture(episode, family_root):
    if (episode is None) == (family_root is None):
        raise click.UsageError("give exactly one of --episode or --family-root")
    return load_episode(episode) if episode else load_family_root(family_root)


episode_option = click.option("--episode", type=click.Choice(EPISODES), help="A hand-authored episode W1..W5.")
family_root_option = click.option(
    "--family-root", type=click.Path(file_okay=False), help="A family instance folder written by `fundbook families`."
)


@click.command()
@episode_option
@family_root_option
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the candidate here (default: stdout).")
@json_option
def gold(episode, family_root, output, as_json):
    """Emit the gold candidate (the reference plan's actions and reports for every day).

    Without --output the candidate itself is printed (JSON); with --output, a
    summary line (or, with --json, a summary object).
    """
    candidate = engine.gold_candidate(_fixture(episode, family_root))
    if not output:
        emit_json(candidate)
        return 0
    write_json(output, candidate)
    summary = {
        "instance_id": candidate["instance_id"],
        "fixture_sha256": candidate["fixture_sha256"],
        "batches": len(candidate["batches"]),
        "output": output,
        "candidate_sha256": engine.content_sha256(candidate),
    }
    if as_json:
        emit_json(summary)
    else:
        click.echo(f"gold candidate for {candidate['instance_id']}: {len(candidate['batches'])} batches -> {output}")
    return 0


@click.command()
@click.argument("candidate", type=click.Path())
@episode_option
@family_root_option
@json_option
def grade(candidate, episode, family_root, as_json):
    """Grade a CANDIDATE file against an episode or family instance.

    Prints the status, then the verdict with its gates, then the score out of 100.
    """
    instance = _fixture(episode, family_root)
    result = engine.grade_candidate(read_json(candidate, "a candidate", MAX_CANDIDATE_BYTES), instance)
    if as_json:
        emit_json(result)
    else:
        click.echo(f"{instance['instance_id']}  fixture {engine.fixture_sha256(instance)}")
        echo_result(result)
    return exit_code_for(result)


@click.command()
@click.argument("name", type=click.Choice(MUTATIONS), required=False)
@episode_option
@family_root_option
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False), help="Write the mutated candidate here (default: stdout)."
)
@click.option("--list", "list_only", is_flag=True, help="List the mutations and their expected outcomes.")
@json_option
def mutate(name, episode, family_root, output, list_only, as_json):
    """Emit the named mutation NAME of the gold candidate (an adverse fixture with its expected outcome)."""
    if list_only:
        if as_json:
            emit_json({m: MUTATION_NOTES[m] for m in MUTATIONS})
        else:
            for m in MUTATIONS:
                click.echo(f"{m:<24} {MUTATION_NOTES[m]}")
        return 0
    if name is None:
        raise click.UsageError("missing the mutation NAME (see --list)")
    candidate, expected = engine.mutate(name, _fixture(episode, family_root))
    if output:
        write_json(output, candidate)
        if as_json:
            emit_json({"mutation": name, "output": output, "expected": expected})
        else:
            click.echo(f"{name} for {candidate['instance_id']} -> {output}")
            click.echo(f"expected outcome: {engine.canonical_json(expected).decode()}")
    else:
        emit_json(candidate)
    return 0


@click.command()
@click.option(
    "--output",
    "-o",
    required=True,
    type=click.Path(file_okay=False),
    help="Folder to write <FAMILY>/seed-<N>/instance.json into.",
)
@click.option(
    "--seeds",
    required=True,
    type=seed_param(),
    multiple=True,
    help="Seeds: `--seeds 1 2 3`, `--seeds 1..200` or `--seeds 1,5,9` (or repeat the option).",
)
@click.argument("more_seeds", nargs=-1, type=seed_param(), metavar="")
@click.option("--family", "families", type=click.Choice(FAMILIES), multiple=True, help="Families (default: all four).")
@json_option
def families(output, seeds, more_seeds, families, as_json):
    """Write practice family instances for the given seeds into a folder."""
    seeds = sorted({s for group in tuple(seeds) + tuple(more_seeds) for s in group})
    written = []
    for family in families or FAMILIES:
        for seed in seeds:
            instance = engine.generate(family, seed)
            path = engine.write_family_root(os.path.join(output, family, f"seed-{seed}"), instance)
            written.append(
                {
                    "instance_id": instance["instance_id"],
                    "path": path,
                    "fixture_sha256": engine.fixture_sha256(instance),
                }
            )
    if as_json:
        emit_json({"written": written})
    else:
        for w in written:
            click.echo(f"{w['instance_id']:<16} {w['fixture_sha256'][:16]}  {w['path']}")
    return 0
