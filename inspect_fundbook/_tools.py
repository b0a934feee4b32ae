"""The model worker's affordances as Inspect tools: submit_batch and the calculation tools project,
exposure, headroom, interest, read_source and note. Each result is the environment's canonical JSON text;
a protocol error (a closed run, arguments not of the named shape) is a ToolError."""

from inspect_ai.tool import ToolDef, ToolError, ToolParams, tool

from launchers.inspect import DeskEnv, ProtocolError

from . import _schema, _store


def run_tool(name, args) -> str:
    store = _store.load()
    env = DeskEnv(_store.env_state(store))
    try:
        out = env.call(name, args)
    except ProtocolError as exc:
        raise ToolError(str(exc))
    _store.save(store, env.state)
    return out


def _plain(**kw):
    return {k: v for k, v in kw.items() if v is not None}


@tool
def submit_batch():
    async def execute(day: int, report: dict, actions: list) -> str:
        """Submit today's artefact: the batch the desk settles today (the last thing you do today).

        Args:
            day: Today's checkpoint (the packet's day).
            report: The book as it will stand once today has settled: cash, funding_cost_to_date, breaches,
                open_approvals, assets (integers; money in cents).
            actions: The actions, each with a unique string id: FUND, ROLL, REPAY, ESCALATE, EXECUTE.

        Returns:
            The desk's decisions (refusals carry their reason codes) and the next checkpoint's packet.
        """
        return run_tool("submit_batch", {"day": day, "report": report, "actions": actions})

    return execute


@tool
def project():
    async def execute(actions: list) -> str:
        """Dry run: the decisions, closing cash and the exact truthful report for these actions.

        Args:
            actions: The actions you consider submitting today.
        """
        return run_tool("project", {"actions": actions})

    return execute


@tool
def exposure():
    async def execute(asset: str, quote: str, notional: int | None = None) -> str:
        """Maturity gap and tail of an asset now and if funded from the quote.

        Args:
            asset: The asset id.
            quote: The quote id.
            notional: The notional to fund, in cents (default: what is unfunded).
        """
        return run_tool("exposure", _plain(asset=asset, quote=quote, notional=notional))

    return execute


@tool
def headroom():
    async def execute() -> str:
        """Counterparty capacity and what is left on each quote."""
        return run_tool("headroom", {})

    return execute


@tool
def interest():
    async def execute(principal: int, rate_bps: int, start_day: int, end_day: int) -> str:
        """ACT/360 interest in cents between two business days of the packet's calendar.

        Args:
            principal: The principal, in cents.
            rate_bps: The rate, in basis points.
            start_day: The first business day.
            end_day: The last business day.
        """
        return run_tool(
            "interest", {"principal": principal, "rate_bps": rate_bps, "start_day": start_day, "end_day": end_day}
        )

    return execute


@tool
def read_source():
    async def execute(id: str) -> str:
        """The full text of a published source.

        Args:
            id: The source's id, as listed in the packet.
        """
        return run_tool("read_source", {"id": id})

    return execute


@tool
def note():
    async def execute(text: str) -> str:
        """Keep a note for later checkpoints.

        Args:
            text: The note.
        """
        return run_tool("note", {"text": text})

    return execute


def typed(made, parameters):
    """A tool whose parameters are the vocabulary's schema (inspect_fundbook/_schema.py), which Inspect checks
    every call against, with the descriptions its docstring gives."""
    auto = ToolDef(made).parameters
    params = ToolParams.model_validate(parameters)
    for name, param in params.properties.items():
        if name in auto.properties and auto.properties[name].description:
            param.description = auto.properties[name].description
    return ToolDef(made, parameters=params).as_tool()


def desk_tools():
    return [
        typed(submit_batch(), _schema.submit_batch_parameters()),
        typed(project(), _schema.project_parameters()),
        exposure(),
        headroom(),
        interest(),
        read_source(),
        note(),
    ]
