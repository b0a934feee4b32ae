"""The compact prompt: one model call a checkpoint, for small local models.

Staged into the worker beside agent.py (standard library only). The worker
uses it when `worker.json` names PROMPT_VERSION (the local llama-cpp sampler
asks for it; the full prompt of agent.py stays the default). A checkpoint is
one conversation: a short system prompt and the day's desk view -- the
packet without what a model cannot use (the raw receipts, the calendar, the
world commitment, exited assets, ended trades, expired quotes) -- plus the
`project` tool's report for taking no action, which the worker runs before
the call, since a one-call day leaves no turn for a tool. The answer is
today's batch itself. A refused answer is retried with the refusal fed back
(the last answer and why it failed, never the whole day's history), so a
retry's prompt changes and the prompt stays bounded.

The host's grammar (launchers/_grammar.py) is built from the view in the
checkpoint message (`view_in`), so it constrains the answer to what the
model was shown. Bump PROMPT_VERSION with any change to this file's output,
and keep every earlier version's output as it was: a published attempt is
replayed from its decision cache under the prompt it ran with (compact/1: the
view without `approvals_requested`, decoded under grammar 1).
"""

import json

PROMPT_VERSION = "compact/2"
PROMPT_VERSIONS = ("compact/1", "compact/2")  # what this worker can still speak (replays of earlier attempts)
MAX_CALLS_PER_DAY = 3        # the first answer and two retries
MAX_LISTED = 20              # entries of each list the view shows
SOURCE_CHARS = 600           # characters of one source's text
SOURCES_CHARS = 3000         # characters of source text in one view, newest first
REFUSAL_CHARS = 400          # characters of a refusal fed back
ANSWER_CHARS = 6000          # characters of a refused answer fed back
VIEW_OPEN = "```json desk"
FENCE_CLOSE = "```"
OUTCOMES = 3                 # earlier checkpoints' outcomes shown

SYSTEM_V1 = """You run a structured-credit funding desk that carries client positions back to back.
Each day you read the desk view (JSON) and answer with today's batch: one JSON object
{"day": <today>, "actions": [...], "report": {...}} and nothing else.

Actions (money in integer cents; action ids a1, a2, ... in order):
  FUND {"asset", "quote", "notional"}   fund an asset from a quote valid today
  ROLL {"trade", "quote"}               move a funding trade to a new quote before it matures
  REPAY {"trade"}                       end a funding trade
  ESCALATE {"kind": "capacity"|"tenor"|"buffer", "amount", "counterparty" (capacity only)}
  EXECUTE {"approval", "action": {"type": "FUND"|"ROLL", ...}}   use an approved escalation
Fund every asset from its settle day until it exits, cheaply, within counterparty headroom,
a quote's available amount and the desk's max tenor; keep cash above min_buffer.

Report the book as it will stand once today has settled (all integers): cash,
funding_cost_to_date, breaches, open_approvals and, for every asset not exited,
{funded, unfunded, maturity_gap_days, tail_cent_days}. `report_if_no_action` is that
report if you take no action today; actions change it."""
SYSTEM = """You run a structured-credit funding desk that carries client positions back to back.
Each day you read the desk view (JSON) and answer with today's batch: one JSON object
{"day": <today>, "actions": [...], "report": {...}} and nothing else.

Actions (money in integer cents; action ids a1, a2, ... in order):
  FUND {"asset", "quote", "notional"}   fund an asset from a quote valid today
  ROLL {"trade", "quote"}               move a funding trade to a new quote before it matures
  REPAY {"trade"}                       end a funding trade
  ESCALATE {"kind": "capacity"|"tenor"|"buffer", "amount", "counterparty" (capacity only)}
  EXECUTE {"approval", "action": {"type": "FUND"|"ROLL", ...}}   use an approved escalation
Fund every asset from its settle day until it exits, cheaply, within counterparty headroom,
a quote's available amount and the desk's max tenor; keep cash above min_buffer.

Report the book as it will stand once today has settled (all integers): cash,
funding_cost_to_date, breaches, open_approvals and, for every asset not exited,
{funded, unfunded, maturity_gap_days, tail_cent_days}. `report_if_no_action` is that
report if you take no action today; actions change it. An ESCALATE that is accepted opens a
new approval: its id is AP and approvals_requested + 1 in three digits (AP001, AP002, ...)."""


def _listed(items):
    return list(items)[:MAX_LISTED]


def _pick(obj, keys):
    return {k: obj[k] for k in keys if k in obj}


def system(version=PROMPT_VERSION) -> str:
    return SYSTEM_V1 if version == "compact/1" else SYSTEM


def view(packet, projection=None, outcomes=(), version=PROMPT_VERSION) -> dict:
    """The day's desk view: what the model can use of the packet, bounded in size. From compact/2 it names how
    many approvals the desk has requested, so a report after today's ESCALATE can name the approval it opened
    (the grammar lists those ids; without the count neither the model nor the grammar could state it)."""
    day = packet["day"]
    desk = packet.get("desk") or {}
    sources, budget = [], SOURCES_CHARS
    for s in sorted(packet.get("sources") or [], key=lambda s: (-s["published_day"], s["id"])):
        text = s["text"][:SOURCE_CHARS]
        if len(text) > budget:
            break
        budget -= len(text)
        sources.append({"id": s["id"], "day": s["published_day"], "text": text})
    out = {
        "day": day, "horizon": packet["horizon"], "cash": packet["cash"],
        "min_buffer": desk.get("min_buffer"), "max_tenor": desk.get("max_tenor"),
        "funding_cost_to_date": packet.get("funding_cost_to_date"),
        "assets": _listed(_pick(a, ("id", "kind", "notional", "settle_day", "exit_day", "haircut_floor_bps", "status"))
                          for a in packet.get("assets") or [] if a.get("status") != "exited"),
        "trades": _listed(_pick(t, ("id", "asset", "quote", "counterparty", "notional", "principal", "rate_bps",
                                    "start", "maturity", "status"))
                          for t in packet.get("trades") or [] if t.get("status") != "ended"),
        "quotes": _listed(dict(_pick(q, ("id", "counterparty", "start_day", "tenor", "rate_bps", "haircut_bps",
                                         "valid_through", "eligible_kinds")),
                               available=q["max_notional"] - q.get("used", 0))
                          for q in packet.get("quotes") or []),
        "counterparties": _listed(_pick(c, ("id", "headroom", "eligible_kinds"))
                                  for c in packet.get("counterparties") or []),
        "approvals": _listed(_pick(a, ("id", "kind", "amount", "status", "counterparty", "expires"))
                             for a in packet.get("approvals") or [] if a.get("status") in ("pending", "approved")),
        "breaches": _listed(packet.get("breaches") or []),
        "sources": sources,
        "last_outcomes": list(outcomes)[-OUTCOMES:],
    }
    if version != "compact/1":
        requested = (packet.get("counters") or {}).get("approval")
        if type(requested) is int and requested >= 0:
            out["approvals_requested"] = requested
    if projection is not None:
        out["report_if_no_action"] = projection
    return out


def checkpoint_message(desk_view) -> str:
    return (f"Day {desk_view['day']} of {desk_view['horizon']}. The desk view:\n{VIEW_OPEN}\n"
            f"{json.dumps(desk_view, sort_keys=True, separators=(',', ':'))}\n{FENCE_CLOSE}\n"
            f"Answer with today's batch for day {desk_view['day']}.")


def messages(packet, projection=None, outcomes=(), version=PROMPT_VERSION) -> list:
    """The opening conversation of a checkpoint."""
    return [{"role": "system", "content": system(version)},
            {"role": "user", "content": checkpoint_message(view(packet, projection, outcomes, version))}]


def retry(opening, answer, refusal, attempt) -> list:
    """The opening conversation, the refused answer and why it was refused (nothing older: bounded). `attempt`
    (2, 3, ...) is named, so two retries never make the same request."""
    return opening + [{"role": "assistant", "content": answer[:ANSWER_CHARS]},
                      {"role": "user", "content": f"Refused: {refusal[:REFUSAL_CHARS]}. Answer again with a "
                                                  f"corrected batch for the same day (answer {attempt} of "
                                                  f"{MAX_CALLS_PER_DAY})."}]


def view_in(conversation):
    """The desk view of a compact conversation (its first user message), or None."""
    if not isinstance(conversation, list) or len(conversation) < 2 or not isinstance(conversation[1], dict):
        return None
    text = conversation[1].get("content")
    if conversation[1].get("role") != "user" or not isinstance(text, str):
        return None
    start = text.find(VIEW_OPEN + "\n")
    if start < 0:
        return None
    body = text[start + len(VIEW_OPEN) + 1:]
    end = body.find("\n" + FENCE_CLOSE)
    try:
        found = json.loads(body[:end] if end >= 0 else body)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _pairs(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"duplicate key {dup!r}")
    return dict(pairs)


def _no_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def read_answer(text):
    """The batch in an answer: exactly one JSON object, strictly read (no duplicate keys, no NaN or
    Infinity, nothing after it). Raises ValueError naming what is wrong; the batch's shape is checked
    by the caller, as the engine checks it."""
    body = text.strip()
    try:
        obj, end = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_no_constant).raw_decode(body)
    except RecursionError:
        raise ValueError("not one JSON object (nested too deeply)")
    except ValueError as exc:
        raise ValueError(f"not one JSON object ({exc})")
    if body[end:].strip():
        raise ValueError(f"text after the JSON object at character {end}")
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object (today's batch)")
    return obj
