"""The price table: integer micro-USD per million tokens, per model.

A call's cost is rounded *up* to the micro-USD, over input and output together,
so a ledger never understates what was spent and nothing is rounded away.
Prompt tokens the provider served from its prefix cache are charged at
`cached_input_micro_usd_per_mtok` when the table gives one, else at the full
input price. Sandbox compute is priced per second, apart from inference.
"""

import os

from ._errors import InputError

PRICES_SCHEMA = "fundbook.prices/1"
DEFAULT_PRICES = os.path.join(os.path.dirname(__file__), "prices.json")
MTOK = 1_000_000
MAX_SAFE = 2**53 - 1  # the largest integer hashed content (records, ledgers, journals) may hold


def _int(value, where):
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_SAFE:
        raise InputError(f"{where}: expected a non-negative integer of at most {MAX_SAFE}")
    return value


def load_prices(path=None) -> dict:
    """Read and check a price table file; returns it as a dict."""
    from ._jsonfile import read_json

    path = path or DEFAULT_PRICES
    table = read_json(path, "price table")
    if not isinstance(table, dict) or table.get("schema") != PRICES_SCHEMA:
        raise InputError(f"{path}: schema: expected {PRICES_SCHEMA!r}")
    models = table.get("models")
    if not isinstance(models, dict) or not models:
        raise InputError(f"{path}: models: expected an object of model id -> prices")
    for model, row in models.items():
        where = f"{path}: models.{model}"
        if not isinstance(row, dict):
            raise InputError(f"{where}: expected an object")
        _int(row.get("input_micro_usd_per_mtok"), where + ".input_micro_usd_per_mtok")
        _int(row.get("output_micro_usd_per_mtok"), where + ".output_micro_usd_per_mtok")
        if "cached_input_micro_usd_per_mtok" in row:
            _int(row["cached_input_micro_usd_per_mtok"], where + ".cached_input_micro_usd_per_mtok")
    sandboxes = table.get("sandboxes") or {}
    if not isinstance(sandboxes, dict):
        raise InputError(f"{path}: sandboxes: expected an object of sandbox name -> rate")
    for name, row in sandboxes.items():
        if not isinstance(row, dict):
            raise InputError(f"{path}: sandboxes.{name}: expected an object")
        _int(row.get("micro_usd_per_second"), f"{path}: sandboxes.{name}.micro_usd_per_second")
    table["_path"] = path
    return table


def model_price(table, model) -> dict:
    row = table["models"].get(model)
    if row is None:
        raise InputError(
            f"{table['_path']}: models.{model}: no price for this model (known: {', '.join(sorted(table['models']))})"
        )
    return {
        "input_micro_usd_per_mtok": row["input_micro_usd_per_mtok"],
        "output_micro_usd_per_mtok": row["output_micro_usd_per_mtok"],
        "cached_input_micro_usd_per_mtok": row.get("cached_input_micro_usd_per_mtok", row["input_micro_usd_per_mtok"]),
    }


def sandbox_rate(table, name):
    """Integer micro-USD per second of the named sandbox; refused when the table has no row for it."""
    row = (table.get("sandboxes") or {}).get(name)
    if row is None:
        raise InputError(
            f"{table['_path']}: sandboxes.{name}: no price for this sandbox (its compute is capped "
            f"separately and must be priced)"
        )
    return row["micro_usd_per_second"]


def table_sha256(table) -> str:
    from engine import content_sha256

    return content_sha256({k: v for k, v in table.items() if k != "_path"})


def call_cost(price, tokens_in: int, tokens_out: int, cached_in: int = 0) -> int:
    """Micro-USD for one call, rounded up; `cached_in` of the prompt tokens were prefix-cache hits."""
    cached_in = max(0, min(cached_in, tokens_in))
    cached_rate = price.get("cached_input_micro_usd_per_mtok", price["input_micro_usd_per_mtok"])
    numerator = (
        (tokens_in - cached_in) * price["input_micro_usd_per_mtok"]
        + cached_in * cached_rate
        + tokens_out * price["output_micro_usd_per_mtok"]
    )
    return -(-numerator // MTOK)


def format_usd(micro_usd: int) -> str:
    """6-decimal USD text from integer micro-USD, without floats."""
    sign = "-" if micro_usd < 0 else ""
    whole, frac = divmod(abs(micro_usd), MTOK)
    return f"{sign}${whole:,}.{frac:06d}"
