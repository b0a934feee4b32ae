"""`python -m experiments.study`: a study's command line (run, status, verify, decide), one line per error with
the command lines' exit codes (1 refused, 64 usage, 130 interrupted). The study itself is experiments/study.py."""

import argparse
import os
import sys

from . import study as S
from .errors import ExperimentError


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, with the CLIs' usage exit code (64), never argparse's 2 (UNSCORABLE here)."""

    def error(self, message):
        print(f"error: {_plain(message)} (see `{self.prog} --help`)", file=sys.stderr)
        sys.exit(64)


def _plain(text):
    """One line whatever a message quotes (a path with a newline in it)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def main(argv=None) -> int:
    parser = _Parser(prog="python -m experiments.study", description=S.__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("run", "status", "verify", "decide"))
    parser.add_argument("study", help="the study folder, e.g. runs/studies/smollm2-heldout")
    parser.add_argument("--bundle", default=S.DEFAULT_BUNDLE)
    args = parser.parse_args(argv)
    try:
        if args.command in ("run", "decide"):
            if args.command == "run":
                S.run(args.study, args.bundle)
            doc = S.write_status(args.study, args.bundle)
            if doc["state"] == "stopped":
                for name, d in S.decide(args.study).items():
                    print(f"{name}: decided {d['verdict']} at n {d['n']} -> {os.path.join(args.study, name)}/"
                          f"decision.json")
            elif args.command == "decide":
                raise ExperimentError(f"{args.study}: the sweep has not stopped: nothing to decide yet")
        elif args.command == "status":
            doc = S.write_status(args.study, args.bundle)
        else:
            doc = S.verify(args.study, args.bundle)
            return 0
    except ExperimentError as exc:
        print(f"error: {_plain(str(exc))}", file=sys.stderr)
        return 1
    except OSError as exc:  # a folder or file the study cannot write (nothing is half-written: temp then rename)
        print(f"error: {_plain(f'{exc.filename}: {exc.strerror}' if exc.filename else str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: the journalled worlds are kept; run it again to resume", file=sys.stderr)
        return 130
    for name, c in doc["comparisons"].items():
        print(f"{name}: n={c['n']} of at most {c['max_n']}, wealth for {c['wealth_for']}, against "
              f"{c['wealth_against']} (threshold {c['threshold']}): {c['verdict'] or 'no verdict yet'}")
    return 0
