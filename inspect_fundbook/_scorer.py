"""desk_grade: the engine's grade of the sample's run (closed by the scorer if the model stopped early:
the days left without a batch are settled as the desk settles a missed checkpoint)."""

from inspect_ai.scorer import Score, mean, scorer

from launchers.inspect import DeskEnv, grade

from . import _store


@scorer(metrics=[mean()])
def desk_grade():
    async def score(state, target):
        store = _store.load()
        env = DeskEnv(_store.env_state(store))
        result = env.finalize()
        _store.save(store, env.state)
        g = grade(result)
        return Score(value=g["value"], answer=g["answer"], metadata=g["metadata"])

    return score
