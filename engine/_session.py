"""The practice desk's session API: JSON strings in, JSON strings out.

The browser keeps a session as its source (an episode, or a family and seed)
and the list of moves so far (a batch, or a day closed without one). Every call
rebuilds the run from those moves -- the same engine, the same receipts -- so a
reload, an import or an export can never drift from what the engine says.
"""

import json

from ._commitment import check_salt
from ._episodes import load_episode
from ._errors import BatchRejected, DeskError, InputError
from ._families import generate
from ._jsonin import MAX_BATCH_BYTES, MAX_PACKET_BYTES, MAX_SESSION_BYTES, parse_json
from ._fixtures import execute_fixture
from ._records import verify_record
from ._replay import finalize_and_grade
from ._run import Run
from ._tools import exposure, headroom, interest, project
from ._world import with_horizon


def _instance(source):
    if not isinstance(source, dict):
        raise InputError("source: expected {episode} or {family, seed}")
    if "episode" in source:
        instance = load_episode(source["episode"])
    elif "family" in source:
        if not isinstance(source["family"], str):
            raise InputError("source.family: expected a family name such as FUND_01")
        seed = source.get("seed")
        if type(seed) is not int or not 1 <= seed <= 2**53 - 1:
            raise InputError("source.seed: expected a positive integer")
        try:
            instance = generate(source["family"], seed)
        except ValueError as exc:
            raise InputError(f"source: {exc}")
    else:
        raise InputError("source: expected {episode} or {family, seed}")
    return with_horizon(instance, source.get("horizon", instance["horizon"]))


def _rebuild(source, moves):
    """The run from a session's source and moves. A source may carry the salt
    of its world commitment (to match a CLI history); by default it is public."""
    salt = source.get("salt") if isinstance(source, dict) else None
    run = Run(_instance(source), None if salt is None else check_salt(salt, "source.salt"))
    if not isinstance(moves, list):
        raise InputError("moves: expected a list of {batch} or {skip: day}")
    for i, move in enumerate(moves):
        if isinstance(move, dict) and "batch" in move:
            try:
                run.submit(move["batch"])
            except BatchRejected as exc:
                raise InputError(f"moves[{i}]: the desk rejects this batch: {exc.message}")
        elif isinstance(move, dict) and type(move.get("skip")) is int and move["skip"] == run.open_day:
            run.skip()
        else:
            raise InputError(f"moves[{i}]: expected {{batch}} or {{skip: day}} for day {run.open_day}")
    return run


_REQUIRED = object()


def _session(source_json, moves_json):
    source = parse_json(source_json, "source", "a session source", MAX_BATCH_BYTES)
    moves = parse_json(moves_json, "moves", "a session's moves", MAX_SESSION_BYTES)
    return source, moves


def _state(run):
    return {"open_day": run.open_day, "horizon": run.horizon, "instance_id": run.instance["instance_id"],
            "fixture_sha256": run.fixture_sha256, "world_commitment": run.world_commitment, "salt": run.salt,
            "head": run.head,
            "packet": run.packet() if run.open_day is not None else None,
            "days": run.days_public()}


# The public names of the session's pieces (builders and launchers rebuild runs through them; the browser
# worker, site/assets/desk/worker.js, still calls the underscored ones).
rebuild, parse_session, state_of = _rebuild, _session, _state


def _call(fn):
    try:
        return json.dumps({"ok": True, **fn()}, sort_keys=True)
    except DeskError as exc:
        return json.dumps({"ok": False, "error": exc.message, "exit_code": exc.exit_code}, sort_keys=True)


def desk_state(source_json: str, moves_json: str) -> str:
    """The session as it stands: open day, packet, per-day outcomes, receipts head."""
    return _call(lambda: _state(_rebuild(*_session(source_json, moves_json))))


def desk_submit(source_json: str, moves_json: str, batch_json: str) -> str:
    """Submit a batch for the open day: decisions and the new state, or the rejection."""
    def go():
        run = _rebuild(*_session(source_json, moves_json))
        batch = parse_json(batch_json, "batch", "a batch {day, report, actions}", MAX_BATCH_BYTES)
        before = len(run.receipts)
        decisions, record = run.submit(batch)
        return {"decisions": decisions, "receipts": run.receipts[before:], "state": _state(run)}
    return _call(go)


def desk_skip(source_json: str, moves_json: str) -> str:
    def go():
        run = _rebuild(*_session(source_json, moves_json))
        if run.open_day is None:
            raise InputError("no open day: every checkpoint is closed")
        before = len(run.receipts)
        run.skip()
        return {"receipts": run.receipts[before:], "state": _state(run)}
    return _call(go)


def desk_finalize(source_json: str, moves_json: str) -> str:
    """Close the remaining checkpoints and the carry horizon; grade."""
    def go():
        run = _rebuild(*_session(source_json, moves_json))
        result = finalize_and_grade(run)
        return {"result": result, "receipts": run.receipts}
    return _call(go)


def desk_tool(packet_json: str, name: str, args_json: str) -> str:
    """Run a calculation tool over a packet: interest, project, exposure, headroom."""
    def go():
        packet = parse_json(packet_json, "packet", "a packet", MAX_PACKET_BYTES)
        args = parse_json(args_json, "args", "the tool's arguments", MAX_BATCH_BYTES)
        if not isinstance(args, dict):
            raise InputError("args: expected an object")

        def arg(key, default=_REQUIRED):
            if key not in args:
                if default is _REQUIRED:
                    raise InputError(f"args.{key}: missing (required by the {name} tool)")
                return default
            return args[key]
        if name == "interest":
            out = interest(packet, arg("principal"), arg("rate_bps"), arg("start_day"), arg("end_day"))
        elif name == "project":
            out = project(packet, arg("actions"))
        elif name == "exposure":
            out = exposure(packet, arg("asset"), arg("quote"), arg("notional", None))
        elif name == "headroom":
            out = headroom(packet)
        else:
            raise InputError(f"tool: expected interest, project, exposure or headroom, got {str(name)[:40]!r}")
        return {"output": out}
    return _call(go)


def verify_run(record_json: str) -> str:
    """Re-execute a published record's fixture and compare with the record:
    per engine field, the published and the computed value where they differ,
    plus the computed fields and receipts (see _records.verify_record)."""
    def go():
        try:
            record = json.loads(record_json)
        except ValueError as exc:
            raise InputError(f"record: not valid JSON ({exc})")
        content = record.get("content") if isinstance(record, dict) else None
        if not isinstance(content, dict) or not isinstance(content.get("fixture"), dict):
            raise InputError("record: field `content.fixture` missing (expected the fixture spec)")
        execution = execute_fixture(content["fixture"])
        return verify_record(record, execution)
    return _call(go)
