"""Generated sections of the documentation that are not figure tables: one function each,
registered by name, from the repository's own data (the shipped prices, the public API).

A section sits between ``<!-- generated:NAME -->`` and ``<!-- /generated:NAME -->``;
``python -m pruner.readme`` rewrites it, and ``tests/docs/test_readme_figures.py`` fails when a page
differs from what this produces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, TypeVar

from ..registry import Registry, origin_of

#: Every generated section by name; a second section under a taken name is refused, naming both.
SECTIONS: Registry[Callable[[Path], str]] = Registry("section", origin=origin_of)
Section = TypeVar("Section", bound=Callable[[Path], str])


def register_section(name: str) -> Callable[[Section], Section]:
    """Decorator: ``fn(root) -> markdown`` renders section ``name``."""
    def decorate(fn: Section) -> Section:
        SECTIONS.add(name, fn)
        return fn
    return decorate


def _money(value: float | None) -> str:
    return "no fee" if value is None else f"${value:g}"


@register_section("prices")
def prices(root: Path) -> str:
    """The shipped price table, one row per model, each with its source and retrieval date."""
    from ..replay.prices import default_prices

    table = default_prices()
    out = [f"Prices in USD per million tokens, from `pruner/replay/prices.json` (retrieved {table.retrieved}).",
           "",
           "| provider | model (aliases) | input | cached input | cache write 5 min | cache write 1 h | output "
           "| context window | min. cacheable | source |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for m in table.models:
        names = f"`{m.model}`" + (f" ({', '.join(f'`{a}`' for a in m.aliases)})" if m.aliases else "")
        window = f"{m.context_window:,}" if m.context_window else "—"
        out.append(f"| {m.provider} | {names} | {_money(m.input)} | {_money(m.cached_input)} "
                   f"| {_money(m.cache_write_5m)} | {_money(m.cache_write_1h)} | {_money(m.output)} | {window} "
                   f"| {m.min_cacheable_tokens:,} | <{m.source}> ({m.retrieved}) |")
    return "\n".join(out)


@register_section("cache-rules")
def cache_rules(root: Path) -> str:
    """The cache models' constants, as the code holds them, with the provider page each quotes."""
    from ..replay import cache

    anthropic = "https://platform.claude.com/docs/en/build-with-claude/prompt-caching"
    openai = "https://developers.openai.com/api/docs/guides/prompt-caching"
    ttls = ", ".join(f"`{k}` = {v:g} s" for k, v in cache.ANTHROPIC_TTLS.items())
    return "\n".join([
        "| provider | rule | value in `pruner/replay/cache.py` | source |",
        "|---|---|---|---|",
        f"| anthropic | lookback from a breakpoint | {cache.ANTHROPIC_LOOKBACK_BLOCKS} blocks | <{anthropic}> |",
        f"| anthropic | cache lifetimes (TTL) | {ttls} | <{anthropic}> |",
        f"| openai | minimum cached prompt | {cache.OPENAI_MIN_TOKENS:,} tokens | <{openai}> |",
        f"| openai | cached prefix granularity | {cache.OPENAI_INCREMENT} tokens | <{openai}> |",
        f"| openai | retention without use | {cache.OPENAI_RETENTION_S:g} s | <{openai}> |",
    ])


@register_section("api")
def api(root: Path) -> str:
    """One mkdocstrings directive per name in ``pruner.__all__``, grouped by kind, each name once."""
    import inspect

    import pruner

    groups: dict[str, list[str]] = {"Functions": [], "Classes": [], "Errors": [], "Constants": []}
    for name in sorted(pruner.__all__, key=str.lower):
        obj = getattr(pruner, name)
        if inspect.isclass(obj) and issubclass(obj, Exception):
            groups["Errors"].append(name)
        elif inspect.isclass(obj):
            groups["Classes"].append(name)
        elif callable(obj):
            groups["Functions"].append(name)
        else:
            groups["Constants"].append(name)
    out = []
    for title, names in groups.items():
        out += [f"## {title}", ""]
        for name in names:
            out += [f"::: pruner.{name}", ""]
    return "\n".join(out).rstrip()
