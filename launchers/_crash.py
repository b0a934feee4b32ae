"""Step boundaries where a host may die, and a hook to make it die there.

Consumption, the journal and the record are made crash-consistent at every
boundary named in BOUNDARIES: whichever one a `kill -9` (or a power cut)
lands on, `recover` either finds nothing spent (and clears the folder) or
writes a record that verifies and settles the project ledger. The tests
prove it by setting FUNDBOOK_LAUNCH_DIE_AT to each name in turn: the process
then sends itself SIGKILL at that boundary, exactly like a host that died
there; `NAME@N` dies the N-th time the run passes NAME (a boundary passed once
per model call). Unset (the normal case), `boundary` does nothing.

BOUNDARIES are passed by every normal run, in this order (the call and
settle ones once per call); RECOVER_BOUNDARIES only by `recover`. Between
the named ones, the randomised kill series (tests/launchers/killseries.py)
kills at uniformly random moments.
"""

import os
import signal

DIE_AT = "FUNDBOOK_LAUNCH_DIE_AT"
BOUNDARIES = (
    "consume:before-start",  # the attempt's folder and desk history exist; nothing journaled
    "consume:before-marker",  # the start (claim, nonce) is journaled; the claim is not consumed yet
    "consume:marker-written",  # the consumed marker's content is written beside it, not yet in place
    "consume:after-marker",  # the claim is consumed; the journal does not say so yet
    "consume:after-journal",  # the consumption is journaled; the project ledger has not seen the claim
    "project:after-open",  # the project ledger holds the claim; the journal does not say so yet
    "project:after-journal",  # the project entry is journaled; the attempt is about to start
    "call:after-step",  # a model answer's step is journaled with its charge; the ledger has not booked it
    "settle:after-charge",  # the call's charge is in the ledger; its release is not
    "settle:after-sandbox-charge",  # the sandbox's charge is in the ledger; its release is not
    "record:after-files",  # transcript, receipts and retained work written; no record.json yet
    "record:after-record",  # record.json is in place; the project ledger is not settled yet
    "record:after-settle",  # the project ledger is settled; the working files are still there
    "record:after-desk-removed",  # desk.sqlite removed; the journal still there
    "record:after-cleanup",  # the working files and the lock are gone; the folder is not renamed yet
    "record:after-rename",  # the folder has its final name
)
RECOVER_BOUNDARIES = (
    "recover:after-ledger",  # recover completed the half-settled calls in ledger.jsonl; no record yet
)
_passed = {}


def boundary(name):
    """Die here (SIGKILL to this very process) when the environment asks for this boundary."""
    want = os.environ.get(DIE_AT)
    if want:
        _passed[name] = _passed.get(name, 0) + 1
        where, _, nth = want.partition("@")
        if where == name and _passed[name] == (int(nth) if nth.isdigit() else 1):
            os.kill(os.getpid(), signal.SIGKILL)
    reached(name)


def reached(name):
    """A seam for tests that list the boundaries a normal run passes (a no-op otherwise)."""
