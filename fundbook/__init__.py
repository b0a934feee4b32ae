"""fundbook's host-side top layer: the command lines and the composed build.

    fundbook/cli/          `fundbook` (the evaluator CLI) and `fundbook-launch` (the model-worker path)
    fundbook/build.py      `make build`'s one-runtime build: builders' stages, then the experiments'

It composes the layers below it (engine < builders < launchers < experiments)
and nothing below imports it.
"""
