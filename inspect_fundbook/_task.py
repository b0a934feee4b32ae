"""The task inspect_fundbook/desk: one Sample per world, the packet as the first user message, the model
worker's tools (protocol=tool, through generate's tool loop or react()) or its JSON answers
(protocol=text, parsed as the worker parses), graded by desk_grade."""

import engine
from inspect_ai import Task, task
from inspect_ai._util.package import get_installed_package_name
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.solver import generate, solver, use_tools

from launchers.inspect import DEFAULT_DAYS, PROTOCOLS, TEXT_SYSTEM, TOOL_SYSTEM, DeskEnv, world_source
from launchers.inspect import task_version

from . import _store
from ._scorer import desk_grade
from ._tools import desk_tools
from ._worlds import parse_worlds, world_id

# Inspect prefixes a task's name with its package only when it can see the package installed under that name;
# an editable install of the distribution `fundbook` (make inspect) hides the module inspect_fundbook, so the
# name is given whole then, and the task is inspect_fundbook/desk either way.
TASK_NAME = "desk" if get_installed_package_name(lambda: None) == "inspect_fundbook" else "inspect_fundbook/desk"
MAX_MESSAGES = 400  # the sample's message limit by default: 20 checkpoints of about ten turns each


def samples(worlds, days, bundle_sha256) -> list:
    out = []
    for family, seed in parse_worlds(worlds):
        source = world_source(family, seed, days)
        env = DeskEnv.new(source)
        desk = env.desk()
        out.append(
            Sample(
                id=world_id(family, seed),
                input=env.opening(),
                metadata={
                    "world": world_id(family, seed),
                    "source": source,
                    "instance_id": desk["instance_id"],
                    "fixture_sha256": desk["fixture_sha256"],
                    "bundle_sha256": bundle_sha256,
                    "horizon": desk["horizon"],
                },
            )
        )
    return out


@solver
def desk_start(system=None):
    """The sample's world into the store (the tools and the scorer read it there), and the system message
    as written (no template: the desk's instructions hold JSON braces)."""

    async def solve(state, generate):
        store = _store.load()
        store.source = dict(state.metadata["source"])
        if system is not None:
            state.messages.insert(0, ChatMessageSystem(content=system))
        return state

    return solve


@solver
def text_desk():
    """protocol=text: the model answers one JSON object a turn ({tool, arguments} or {batch}); each answer goes
    to the same environment and its result comes back as a user message, until the run closes or a limit."""

    async def solve(state, generate):
        while not state.completed:
            state = await generate(state)
            store = _store.load()
            env = DeskEnv(_store.env_state(store))  # a copy: the store changes only once the reply is in
            _, reply, _ = env.text_turn(state.output.completion)
            state.messages.append(ChatMessageUser(content=reply))  # may raise the message limit: then no move
            _store.save(store, env.state)
            if env.closed:
                break
        return state

    return solve


@task(name=TASK_NAME)
def desk(
    worlds: str | list[str] = "practice:FUND_01:1..5",
    days: int = DEFAULT_DAYS,
    protocol: str = "tool",
    agent: str = "generate",
    bundle: str = "build/engine",
    message_limit: int = MAX_MESSAGES,
):
    """fundbook's funding desk: one run per world, graded by the engine (score out of 100, gates, verdict).

    Args:
        worlds: practice:FUND_01:1..5, FUND_02:7, a published held-out list (heldout:DIR or
            heldout:DIR:FIRST..LAST, DIR holding its commitment.json and reveal.json), or several separated by commas
            (Inspect's CLI hands a comma list as a list: the same worlds).
        days: Checkpoints per world (default 20).
        protocol: tool (the tools are called as tools) or text (one JSON object an answer, as the worker).
        agent: generate (generate's tool loop) or react (Inspect's react() agent); protocol=tool only.
        bundle: The engine bundle (`make build-engine`); its sha256 is the task's version.
        message_limit: Messages per sample (2..40000; default 400).
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol: expected one of {', '.join(PROTOCOLS)}, got {str(protocol)[:40]!r}")
    if agent not in ("generate", "react") or (agent == "react" and protocol != "tool"):
        raise ValueError("agent: expected generate, or react with protocol=tool")
    if type(days) is not int or not 1 <= days <= 60:
        raise ValueError(f"days: expected an integer in 1..60, got {days!r}")
    if type(message_limit) is not int or not 2 <= message_limit <= 100 * MAX_MESSAGES:
        raise ValueError(f"message_limit: expected an integer in 2..{100 * MAX_MESSAGES}, got {message_limit!r}"[:120])
    version, bundle_sha256 = task_version(bundle)
    if protocol == "text":
        plan = [desk_start(TEXT_SYSTEM), text_desk()]
    elif agent == "react":
        from inspect_ai.agent import as_solver, react

        plan = [desk_start(), as_solver(react(prompt=TOOL_SYSTEM, tools=desk_tools(), submit=False))]
    else:
        plan = [desk_start(TOOL_SYSTEM), use_tools(desk_tools()), generate(tool_calls="loop")]
    return Task(
        dataset=samples(worlds, days, bundle_sha256),
        solver=plan,
        scorer=desk_grade(),
        version=version,
        message_limit=message_limit,
        metadata={
            "engine_version": engine.ENGINE_VERSION,
            "bundle_sha256": bundle_sha256,
            "protocol": protocol,
            "agent": agent,
            "days": days,
        },
    )
