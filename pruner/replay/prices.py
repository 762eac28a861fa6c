"""Prices per model: a dated data file, each row with its source.

The shipped table (``prices.json`` beside this module) was copied from the
providers' own pricing pages, retrieved 2026-11-30; every row names its source
URL. A user can pass their own file in the same shape (``pruner replay
--prices FILE``) or edit the prices in the dashboard. Every dollar figure the
replay prints says which table, model and date it used (``PriceTable.label``).

>>> table = default_prices()
>>> p = table.get("claude-sonnet-4-5")
>>> p.model, p.input, p.cached_input, p.cache_write_5m, p.output
('claude-sonnet-4-5-20250929', 3.0, 0.3, 3.75, 15.0)
>>> table.get("gpt-4o").cache_write_5m is None    # OpenAI charges no write fee
True
>>> round(p.dollars(input=1_000_000, cached=0, written=0, output=0), 2)
3.0
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any, Iterable, Literal, Mapping, overload

from ..errors import ConfigurationError
from ..jsonio import load_json_file

SCHEMA = "pruner.prices/1"
PROVIDERS = ("anthropic", "openai", "google")
#: The highest price a row may hold, in USD per million tokens (issue 23, defect 6). The dearest
#: price on any provider's page is a few hundred dollars (OpenAI's o1-pro output, $600): a price 16
#: times that is a typo or damage, and keeping every price this small keeps every bill finite (a
#: 10**12-token usage at this price is 10**10 dollars, far from float's range).
MAX_PRICE_PER_MTOK = 10_000.0
_NUMBERS = ("input", "cached_input", "output")
_OPTIONAL_NUMBERS = ("cache_write_5m", "cache_write_1h")
_PER = 1_000_000


@dataclass(frozen=True)
class ModelPrice:
    """One model's prices in USD per million tokens, with where they come from."""

    provider: str
    model: str
    input: float
    cached_input: float
    output: float
    cache_write_5m: float | None = None  # None: no write fee (a miss bills at input)
    cache_write_1h: float | None = None
    context_window: int | None = None
    min_cacheable_tokens: int = 1024
    aliases: tuple[str, ...] = ()
    source: str = ""
    retrieved: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)  # the row's other fields (source notes)

    def write_price(self, ttl: str = "5m") -> float:
        """Price of a cache write: the TTL's write price, or input when there is no write fee."""
        value = self.cache_write_1h if ttl == "1h" else self.cache_write_5m
        return self.input if value is None else value

    def dollars(self, *, input: float, cached: float, written: float, output: float, ttl: str = "5m") -> float:
        """The bill for token counts (in the provider's units)."""
        return (input * self.input + cached * self.cached_input + written * self.write_price(ttl)
                + output * self.output) / _PER

    def as_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "aliases": list(self.aliases),
                "input": self.input, "cached_input": self.cached_input, "cache_write_5m": self.cache_write_5m,
                "cache_write_1h": self.cache_write_1h, "output": self.output,
                "context_window": self.context_window, "min_cacheable_tokens": self.min_cacheable_tokens,
                "source": self.source, "retrieved": self.retrieved, **dict(self.extra)}


@dataclass(frozen=True)
class PriceTable:
    """The rows of one prices file, and where the file came from."""

    models: tuple[ModelPrice, ...]
    retrieved: str
    origin: str  # "shipped" or the path of the user's file

    @property
    def label(self) -> str:
        """What every dollar figure says about its prices."""
        return f"{'pruner prices' if self.origin == 'shipped' else self.origin}, retrieved {self.retrieved}"

    def names(self, provider: str | None = None) -> list[str]:
        return [m.model for m in self.models if provider is None or m.provider == provider]

    def get(self, name: str, provider: str | None = None) -> ModelPrice:
        """The row for ``name`` (a model id or one of its aliases); ``ConfigurationError`` if none."""
        for m in self.models:
            if (name == m.model or name in m.aliases) and (provider is None or m.provider == provider):
                return m
        known = ", ".join(self.names(provider))
        where = f" for provider {provider}" if provider else ""
        raise ConfigurationError(f"no prices for model {name!r}{where} in {self.label}; known: {known}")

    def find(self, model: str, provider: str | None = None) -> ModelPrice | None:
        """The row for a recorded model id, or None: never another model's row.

        The id itself, one of a row's aliases, or a dated id whose undated name is
        one (``claude-opus-4-1-20250805`` -> ``claude-opus-4-1``; a snapshot has its
        model's price). A row with the exact id always wins over the undated name
        (``gpt-4o-2024-05-13`` has a price of its own).

        >>> table = default_prices()
        >>> table.find("claude-opus-4-1-20250805").model, table.find("claude-sonnet-4-5-20991231").model
        ('claude-opus-4-1-20250805', 'claude-sonnet-4-5-20250929')
        >>> table.find("claude-sonnet-9") is None
        True
        """
        if not isinstance(model, str) or not model:
            return None
        for name in (model, _undated(model)):
            if not name:
                continue
            for m in self.models:
                if (name == m.model or name in m.aliases) and (provider is None or m.provider == provider):
                    return m
        return None

    def with_model(self, price: ModelPrice) -> "PriceTable":
        """This table with ``price`` replacing the row of the same model (or added)."""
        rows = [price if m.model == price.model else m for m in self.models]
        if price.model not in {m.model for m in self.models}:
            rows.append(price)
        return replace(self, models=tuple(rows), origin="edited" if self.origin == "shipped" else self.origin)


_DATE_SUFFIX = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")


def _undated(model: str) -> str:
    """``model`` without a trailing snapshot date (``-20250805`` or ``-2024-08-06``), or ""."""
    stripped = _DATE_SUFFIX.sub("", model)
    return stripped if stripped != model else ""


@overload
def _number(value: Any, where: str, *, optional: Literal[False] = False) -> float: ...


@overload
def _number(value: Any, where: str, *, optional: Literal[True]) -> float | None: ...


def _number(value: Any, where: str, *, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    # Compared before any conversion: float(10**400) would overflow, and NaN fails every comparison.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_PRICE_PER_MTOK:
        huge = isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**20
        shown = f"a number of about {int(value.bit_length() * 0.30103)} digits" if huge else repr(value)
        raise ConfigurationError(f"{where} must be a non-negative number of USD per million tokens, at most "
                                 f"{MAX_PRICE_PER_MTOK:,.0f} (no provider's price comes near it), got {shown}")
    return float(value)


def parse_prices(data: Any, *, origin: str) -> PriceTable:
    """A ``PriceTable`` from a decoded prices document; errors name the file, row and field."""
    if not isinstance(data, dict):
        raise ConfigurationError(f"{origin}: expected a JSON object with 'models'")
    if data.get("schema", SCHEMA) != SCHEMA:
        raise ConfigurationError(f"{origin}: field 'schema' is {data.get('schema')!r}; expected {SCHEMA!r}")
    rows = data.get("models")
    if not isinstance(rows, list) or not rows:
        raise ConfigurationError(f"{origin}: field 'models' must be a non-empty list")
    retrieved = data.get("retrieved")
    if not isinstance(retrieved, str) or not retrieved:
        raise ConfigurationError(f"{origin}: field 'retrieved' must say when the prices were taken (a date)")
    models = []
    seen: set[str] = set()
    for k, row in enumerate(rows):
        where = f"{origin}: models[{k}]"
        if not isinstance(row, dict):
            raise ConfigurationError(f"{where} must be an object")
        name, provider = row.get("model"), row.get("provider")
        if not isinstance(name, str) or not name:
            raise ConfigurationError(f"{where}: field 'model' must be a non-empty string")
        if name in seen:
            raise ConfigurationError(f"{where}: model {name!r} appears twice")
        seen.add(name)
        if provider not in PROVIDERS:
            raise ConfigurationError(f"{where}: field 'provider' is {provider!r}; expected one of "
                                     f"{', '.join(PROVIDERS)}")
        nums = {f: _number(row.get(f), f"{where}: field '{f}'") for f in _NUMBERS}
        opt = {f: _number(row.get(f), f"{where}: field '{f}'", optional=True) for f in _OPTIONAL_NUMBERS}
        window = row.get("context_window")
        if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window <= 0):
            raise ConfigurationError(f"{where}: field 'context_window' must be a positive whole number or null")
        minimum = row.get("min_cacheable_tokens", 1024)
        if isinstance(minimum, bool) or not isinstance(minimum, int) or minimum < 0:
            raise ConfigurationError(f"{where}: field 'min_cacheable_tokens' must be a whole number >= 0")
        aliases = row.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise ConfigurationError(f"{where}: field 'aliases' must be a list of strings")
        known = {"provider", "model", "aliases", "context_window", "min_cacheable_tokens", "source", "retrieved",
                 *_NUMBERS, *_OPTIONAL_NUMBERS}
        models.append(ModelPrice(
            provider=provider, model=name, context_window=window, min_cacheable_tokens=minimum,
            aliases=tuple(aliases), source=str(row.get("source", "")), retrieved=str(row.get("retrieved", retrieved)),
            extra={k2: v for k2, v in row.items() if k2 not in known}, input=nums["input"],
            cached_input=nums["cached_input"], output=nums["output"], cache_write_5m=opt["cache_write_5m"],
            cache_write_1h=opt["cache_write_1h"]))
    return PriceTable(models=tuple(models), retrieved=retrieved, origin=origin)


def default_prices() -> PriceTable:
    """The shipped table (``pruner/replay/prices.json``)."""
    text = resources.files(__package__).joinpath("prices.json").read_text(encoding="utf-8")
    return parse_prices(json.loads(text), origin="shipped")


def load_prices(path: str) -> PriceTable:
    """A user's prices file (same shape as the shipped one); errors name the file and field."""
    data = load_json_file(path, error=ConfigurationError, expected="expected a prices file in the shape of "
                                                                   "pruner/replay/prices.json")
    return parse_prices(data, origin=str(path))


def table_rows(table: PriceTable, providers: Iterable[str] = PROVIDERS) -> list[dict[str, Any]]:
    """One plain row per model (the dashboard's price editor and ``--json`` use these)."""
    wanted = set(providers)
    return [m.as_dict() for m in table.models if m.provider in wanted]
