"""Hand-authored episodes W1..W5: the public reference input in the bundle.

They are JSON files inside the engine package, read with pkgutil so that they
load the same from a source tree, a wheel or the zip on Pyodide's sys.path.
"""

import pkgutil

from ._errors import InputError
from ._jsonin import MAX_INSTANCE_BYTES, parse_json
from ._world import validate_instance

EPISODES = ("W1", "W2", "W3", "W4", "W5")
EPISODE_TOPICS = {
    "W1": "plain match funding",
    "W2": "a roll before maturity",
    "W3": "capacity exhausted: escalation and an approved execution",
    "W4": "a haircut shock that squeezes cash",
    "W5": "an exit delay that opens a tail",
}


def episode_bytes(episode: str) -> bytes:
    if episode not in EPISODES:
        raise InputError(f"episode: expected one of {', '.join(EPISODES)}, got {episode!r}")
    data = pkgutil.get_data("engine", f"episodes/{episode}.json")
    if data is None:
        raise InputError(f"episode {episode}: the reference input is missing from the engine")
    return data


def load_episode(episode: str) -> dict:
    where = f"episodes/{episode}.json"
    return validate_instance(parse_json(episode_bytes(episode), where, "an episode", MAX_INSTANCE_BYTES), where=where)
