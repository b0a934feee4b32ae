"""What each register and leaderboard column means: one text, shown twice --
as the column header's tooltip and in the glossary under the tables -- so the
two cannot drift."""

REGISTER = {
    "world": (
        "World",
        "The world the run was played in: a generated practice family and its seed. The link opens "
        "the run page: every figure, every hash in full, the receipts, the command, and a button "
        "that re-executes the run in your browser.",
    ),
    "policy": (
        "Policy",
        "The scripted policy that wrote the candidate (a baseline, not a model): do-nothing takes no "
        "action, shortest-cheapest funds each position from the shortest, cheapest quote, reference "
        "is the engine's own plan.",
    ),
    "test": (
        "Test",
        "The hand-authored episode (W1–W5) and, for an adversarial fixture, the mutation that breaks its "
        "gold candidate on purpose. The link opens the run page.",
    ),
    "kind": (
        "Kind",
        "reference: the gold candidate of an episode, which must come out SCORED, QUALIFIED, 100/100. "
        "adversarial: a candidate broken on purpose, with the outcome the grader must give it.",
    ),
    "check": (
        "Grader test",
        "Whether the grader gave the fixture exactly the outcome the fixture states: passed or "
        "failed. Hover the badge, or open the run page, for the expected and the observed "
        "outcome. An adversarial row reading QUALIFIED 100/100 is correct when that was expected: "
        "the mutation was refused and the rest of the run was sound.",
    ),
    "status": (
        "Status",
        "Whether the run could be graded: SCORED, MALFORMED (the candidate was not well formed: no "
        "score at all, not a zero) or UNSCORABLE (the evaluator had no valid reference).",
    ),
    "verdict": (
        "Verdict",
        "QUALIFIED when the run passes every gate (no settlement failure, no false full "
        "protection, no material misstatement, an accepted batch on 18 of 20 checkpoints), else "
        "NOT_QUALIFIED. Read before the score.",
    ),
    "score": ("Score", "Integer points out of 100: report accuracy 40, funding cost 30, maturity protection 30."),
    "scale": (
        "Same world",
        "The scores that doing nothing and the reference plan get on the same world, so a score "
        "can be placed on its scale: doing nothing keeps the report-accuracy points while its "
        "cash goes negative, so it can score near 50 and still fail the settlement gate. A dash: "
        "the publication holds no such run of that world.",
    ),
    "fixture": (
        "Fixture",
        "The first 12 hex digits of the fixture's sha256: the canonical JSON of the world the run "
        "was played in. The run page prints it in full.",
    ),
    "engine": (
        "Engine",
        "The first 12 hex digits of the sha256 of the compiled engine bundle that executed the run: "
        "the bundle this site serves to the practice desk and to verify.",
    ),
    "path": (
        "Execution path",
        "Where that engine ran: 'compiled bundle in Pyodide' is the bundle in the pinned "
        "Pyodide runtime under Node at build time. Host Python only ran beside it as a parity "
        "check; no published number comes from it.",
    ),
    "time": (
        "Time",
        "Wall-clock execution time on the machine that built the runs, from the record's volatile "
        "part: not hashed, and different on your machine.",
    ),
}

BOARD = {
    "rank": (
        "Rank",
        "A model row's place by mean score among the ranked rows (those over at least the board's minimum "
        "of worlds), and below it the band of ranks it could hold: from 1 plus the rows whose mean band lies "
        "wholly above its own, to the number ranked less those wholly below. The bands hold simultaneously "
        "(95 %, at every number of worlds), so every rank band does too.",
    ),
    "agent": (
        "Agent",
        "Who wrote the candidates: a model path (provider, model id and harness) under its model's heading "
        "(one set of weights), a practitioner cohort, or a scripted baseline policy, each labelled for "
        "what it is; a base model (pretrained only) is labelled so on every row.",
    ),
    "qualified": (
        "Qualified",
        "The share of worlds on which the counted attempt was SCORED and QUALIFIED, with its "
        "95 % Wilson score interval over worlds.",
    ),
    "mean": (
        "Mean score",
        "The mean score in points out of 100 over the worlds played, one counted attempt per "
        "world; a ranked model row with its simultaneous band (a betting confidence sequence, "
        "holding with every other ranked row's at 95 % and at every number of worlds), any other "
        "row with its own 95 % Student-t interval over worlds. A counted attempt without a result "
        "scores what the engine grades for the batches the desk accepted from it.",
    ),
    "worlds": (
        "Worlds",
        "How many distinct worlds (family and seed) the agent played: n of the intervals. One attempt "
        "counts for each world, the last try whatever its end; every try is on the Attempts page.",
    ),
    "cost": (
        "Cost",
        "What the attempts cost: US dollars from the launcher's ledger (integer micro-USD), with model "
        "calls and tokens; a local model costs $0 and its CPU time is shown, in total and per call (rounded half up); "
        "a scripted baseline makes no model calls.",
    ),
    "date": ("Date", "The newest record of the row: a run's build date or an attempt's start (UTC)."),
    "links": ("Evidence", "The runs, transcripts and pre-registered comparisons behind the row."),
}


def title(table: dict, key: str) -> str:
    return table[key][1]
