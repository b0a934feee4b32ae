"""Hypothesis strategies: batches drawn from what a packet offers (valid ids, wild values)."""

from hypothesis import strategies as st

from engine._report import gold_report


def actions_for(packet):
    """A strategy of action lists that reference the packet's own ids."""
    assets = [a["id"] for a in packet["assets"]] or ["A1"]
    quotes = [q["id"] for q in packet["quotes"]] or ["Q01"]
    trades = [t["id"] for t in packet["trades"]]
    approvals = [a["id"] for a in packet["approvals"]]
    cps = [c["id"] for c in packet["counterparties"]]
    notional = st.one_of(st.sampled_from([a["notional"] for a in packet["assets"]] or [100]), st.integers(1, 3 * 10**9))
    fund = st.fixed_dictionaries(
        {
            "type": st.just("FUND"),
            "asset": st.sampled_from(assets),
            "quote": st.sampled_from(quotes),
            "notional": notional,
        }
    )
    options = [
        fund,
        st.fixed_dictionaries(
            {
                "type": st.just("ESCALATE"),
                "kind": st.sampled_from(["capacity", "tenor", "buffer"]),
                "counterparty": st.sampled_from(cps),
                "amount": st.integers(1, 4 * 10**9),
            }
        ),
    ]
    if trades:
        options.append(
            st.fixed_dictionaries(
                {"type": st.just("ROLL"), "trade": st.sampled_from(trades), "quote": st.sampled_from(quotes)}
            )
        )
        options.append(st.fixed_dictionaries({"type": st.just("REPAY"), "trade": st.sampled_from(trades)}))
    if approvals:
        options.append(
            st.fixed_dictionaries(
                {
                    "type": st.just("EXECUTE"),
                    "approval": st.sampled_from(approvals),
                    "action": fund.map(lambda f: {k: v for k, v in f.items()}),
                }
            )
        )
    return st.lists(st.one_of(options), max_size=4).map(lambda acts: [dict(a, id=f"h{i}") for i, a in enumerate(acts)])


def truthful_report(run):
    """A report of the book as opened (not graded here)."""
    return gold_report(run.book, run.open_day)
