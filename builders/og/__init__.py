"""build-og: one Open Graph PNG card per page and per run, drawn locally (`python -m builders.og`)."""

__all__ = ["cards"]
