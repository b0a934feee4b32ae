"""Code staged into the worker. Standard library only: it runs in a bare
sandbox with the calculation tools and nothing of the evaluator."""
