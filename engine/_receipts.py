"""Hash-chained receipts: `{seq, day, kind, payload, prev_hash, hash}`.

hash = sha256(canonical_json({seq, day, kind, payload, prev_hash})). The first
receipt's prev_hash is the chain's genesis, the world commitment
(engine/_commitment.py), so a chain is bound to its world without showing it.
The head of a chain is `{size, hash}`: the number of receipts and the last hash;
an empty chain's head is `{0, genesis}`.
"""

from ._canon import NotCanonical, engine_sha256
from ._diff import first_difference
from ._errors import ReplayMismatch

RECEIPT_KINDS = ("ASSET", "EVENT", "APPROVAL", "BATCH", "ACTION", "FLOW", "BREACH", "CLOSE", "FINAL")


def receipt_hash(seq, day, kind, payload, prev_hash) -> str:
    return engine_sha256({"seq": seq, "day": day, "kind": kind, "payload": payload, "prev_hash": prev_hash})


def extend(chain, entries, genesis):
    """Append log entries to a chain (a list of receipts), returning the new receipts."""
    prev = chain[-1]["hash"] if chain else genesis
    seq = chain[-1]["seq"] + 1 if chain else 1
    added = []
    for entry in entries:
        h = receipt_hash(seq, entry["day"], entry["kind"], entry["payload"], prev)
        receipt = {"seq": seq, "day": entry["day"], "kind": entry["kind"], "payload": entry["payload"],
                   "prev_hash": prev, "hash": h}
        chain.append(receipt)
        added.append(receipt)
        prev = h
        seq += 1
    return added


def head(chain, genesis):
    """{size, hash} of a chain (or of its verified tail: the size is the last seq)."""
    if not chain:
        return {"size": 0, "hash": genesis}
    return {"size": chain[-1]["seq"], "hash": chain[-1]["hash"]}


def verify_chain(receipts, genesis, expected_head=None):
    """Check shapes, sequence numbers, links and hashes; name the first bad receipt."""
    if not isinstance(receipts, list):
        raise ReplayMismatch("receipts: expected a list", field="receipts")
    prev = genesis
    for index, r in enumerate(receipts):
        want_seq = index + 1
        if (not isinstance(r, dict) or set(r) != {"seq", "day", "kind", "payload", "prev_hash", "hash"}
                or type(r["seq"]) is not int or type(r["day"]) is not int or r["kind"] not in RECEIPT_KINDS
                or not isinstance(r["payload"], dict) or not isinstance(r["prev_hash"], str)
                or not isinstance(r["hash"], str)):
            raise ReplayMismatch(f"receipt at position {want_seq}: expected {{seq, day, kind, payload, prev_hash, hash}} "
                                 f"with a known kind", seq=want_seq, field="shape")
        if r.get("seq") != want_seq:
            if isinstance(r.get("seq"), int) and r["seq"] > want_seq:
                raise ReplayMismatch(f"receipt {want_seq} is missing (found receipt {r['seq']} after {want_seq - 1})",
                                     seq=want_seq, field="seq")
            raise ReplayMismatch(f"receipt at position {want_seq} has seq {r.get('seq')} (reordered or duplicated)",
                                 seq=want_seq, field="seq")
        if r.get("prev_hash") != prev:
            raise ReplayMismatch(f"receipt {want_seq}: prev_hash does not link to receipt {want_seq - 1} (reordered, dropped or edited)",
                                 seq=want_seq, field="prev_hash")
        try:
            recomputed = receipt_hash(r["seq"], r["day"], r["kind"], r["payload"], r["prev_hash"])
        except NotCanonical as exc:
            raise ReplayMismatch(f"receipt {want_seq}: {exc}", seq=want_seq, field="payload")
        if recomputed != r.get("hash"):
            raise ReplayMismatch(f"receipt {want_seq} ({r.get('kind')}, day {r.get('day')}): hash does not match its content (edited)",
                                 seq=want_seq, field="hash")
        prev = r["hash"]
    if expected_head is not None:
        size = len(receipts)
        if size < expected_head["size"]:
            raise ReplayMismatch(f"truncated: the head says {expected_head['size']} receipts ending {expected_head['hash'][:12]}, found {size}",
                                 seq=size + 1, field="head")
        if size > expected_head["size"]:
            raise ReplayMismatch(f"extended: the head says {expected_head['size']} receipts, found {size}",
                                 seq=expected_head["size"] + 1, field="head")
        if prev != expected_head["hash"]:
            raise ReplayMismatch(f"receipt {size}: hash {prev[:12]} differs from the head {expected_head['hash'][:12]}",
                                 seq=size, field="head")


def compare_receipts(produced, stored, start):
    """Check receipts a replay `produced` against the `stored` ones from index `start`;
    the first difference is a ReplayMismatch naming seq, kind and field. Returns the next index."""
    for offset, mine in enumerate(produced):
        index = start + offset
        if index >= len(stored):
            raise ReplayMismatch(f"receipt {mine['seq']} ({mine['kind']}, day {mine['day']}) is missing: the history ends early",
                                 seq=mine["seq"], field="missing")
        theirs = stored[index]
        for field in ("day", "kind"):
            if mine[field] != theirs[field]:
                raise ReplayMismatch(f"receipt {theirs['seq']}: {field} is {theirs[field]!r}, replay gives {mine[field]!r}",
                                     seq=theirs["seq"], field=field)
        where = first_difference(mine["payload"], theirs["payload"], "payload")
        if where:
            raise ReplayMismatch(f"receipt {theirs['seq']} ({theirs['kind']}, day {theirs['day']}): {where} differs from replay",
                                 seq=theirs["seq"], field=where)
        if mine["hash"] != theirs["hash"]:
            raise ReplayMismatch(f"receipt {theirs['seq']}: hash differs from replay", seq=theirs["seq"], field="hash")
    return start + len(produced)
