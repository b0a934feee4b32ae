"""fundbook's experiment layer (host only): sweeps of arms over many worlds,
observation rows under a frozen evaluator, and paired decisions.

Nothing in engine/ imports this package. `experiments.work` is the one module
that also runs inside a Modal container and inside the pinned Pyodide; it
needs only the standard library and the engine. The rest may use click,
numpy, pyarrow and altair, imported where they are needed.
"""
