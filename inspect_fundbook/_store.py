"""The sample's desk state between tool calls: plain JSON in Inspect's store."""

from inspect_ai.util import StoreModel, store_as
from pydantic import Field


class DeskStore(StoreModel):
    source: dict = Field(default_factory=dict)  # {family, seed, horizon}
    moves: list = Field(default_factory=list)  # [{batch}] the desk accepted, in order
    notes: str = Field(default="")
    result: dict | None = Field(default=None)  # the engine's graded result once the run is closed


def load():
    return store_as(DeskStore)


def env_state(store) -> dict:
    return {"source": dict(store.source), "moves": list(store.moves), "notes": store.notes, "result": store.result}


def save(store, state):
    store.moves = state["moves"]
    store.notes = state["notes"]
    store.result = state["result"]
