"""Every extension point's registry refuses a second registration under a taken name, naming both
(issue 24: "registering a name twice silently replaces the first"), and the typed contracts are
enforced where the type checker cannot see: format modules, trackers, strategies, cache models."""

from __future__ import annotations

import types

import pytest

from dashboard.pages import registered_pages
from pruner import IncrementalPruner, Message, PruneConfig, Session
from pruner.errors import ConfigurationError, PrunerError
from pruner.formats import FORMATS, Format, register_module, register_format
from pruner.readme.sections import SECTIONS, register_section
from pruner.readme.tables import TABLES, register_table
from pruner.registry import DuplicateRegistrationError
from pruner.replay.cache import CACHE_MODELS, AnthropicCache, CacheModel, register_cache_model
from pruner.replay.strategy import STRATEGIES, Strategy, register_strategy
from pruner.rules import EXPLANATIONS, RULES, explains, register_rule


def _refused(excinfo: pytest.ExceptionInfo[DuplicateRegistrationError], *both: str) -> None:
    message = str(excinfo.value)
    assert isinstance(excinfo.value, PrunerError)
    for where in both:
        assert where in message, (where, message)


def test_a_second_rule_under_a_taken_name_is_refused():
    """Defect 24."""
    first = RULES["ttl"]
    with pytest.raises(DuplicateRegistrationError) as excinfo:
        @register_rule("ttl", stage="expired", description="a second ttl")
        def my_ttl(index, alive, config):
            return []
    _refused(excinfo, "rule 'ttl'", "pruner.rules.expired.expire_by_ttl",
             "test_a_second_rule_under_a_taken_name_is_refused.<locals>.my_ttl")
    assert RULES["ttl"] is first


def test_a_second_explanation_under_a_taken_name_is_refused():
    """Defect 24."""
    first = EXPLANATIONS["ttl"]
    with pytest.raises(DuplicateRegistrationError) as excinfo:
        @explains("ttl")
        def my_reason(removal, messages):
            return "mine"
    _refused(excinfo, "explanation 'ttl'", "pruner.rules.expired._explain_ttl", "my_reason")
    assert EXPLANATIONS["ttl"] is first


def test_a_second_format_under_a_taken_name_is_refused():
    """Defect 24."""
    first = FORMATS["native"]
    module = types.ModuleType("my_plugin.native_clone")
    module.NAME, module.DESCRIPTION = "native", "a clone"
    module.detect = lambda text, probe: 0.0
    module.loads = lambda text, *, file="<input>", skip_bad_lines=False: Session.of([])
    module.loads.__module__ = module.detect.__module__ = module.__name__
    with pytest.raises(DuplicateRegistrationError) as excinfo:
        register_module(module)
    _refused(excinfo, "format 'native'", "pruner.formats.native", "my_plugin.native_clone")
    with pytest.raises(DuplicateRegistrationError):
        register_format(Format(name="native", description="x", detect=module.detect, loads=module.loads))
    assert FORMATS["native"] is first


def test_a_format_module_without_the_contract_is_refused_by_name():
    module = types.ModuleType("my_plugin.half_format")
    module.NAME, module.DESCRIPTION = "half_format", "no loads"
    module.detect = lambda text, probe: 0.0
    with pytest.raises(ConfigurationError, match="my_plugin.half_format must define a function loads"):
        register_module(module)
    module.loads = lambda text: Session.of([])  # no file=, skip_bad_lines= keywords
    with pytest.raises(ConfigurationError, match="loads must accept the keyword 'file'"):
        register_module(module)
    assert "half_format" not in FORMATS


def test_a_second_strategy_under_a_taken_name_is_refused():
    """Defect 24."""
    first = STRATEGIES["full"]
    with pytest.raises(DuplicateRegistrationError) as excinfo:
        @register_strategy("full", summary="a second full")
        class MyFull(Strategy):
            def step(self, request, new):
                raise AssertionError("never run")
    _refused(excinfo, "strategy 'full'", "pruner.replay.strategies.full.Full", "MyFull")
    assert STRATEGIES["full"] is first and (first.factory.name, first.factory.summary) == ("full", first.summary)


def test_a_strategy_without_step_cannot_be_made():
    class NoStep(Strategy):
        pass
    with pytest.raises(TypeError, match="abstract"):
        NoStep(env=None)  # type: ignore[abstract,arg-type]  # the point: the contract refuses it


def test_a_second_cache_model_for_a_provider_is_refused():
    """Defect 24."""
    with pytest.raises(DuplicateRegistrationError) as excinfo:
        @register_cache_model
        class MyAnthropic(AnthropicCache):
            provider = "anthropic"
    _refused(excinfo, "cache model 'anthropic'", "pruner.replay.cache.AnthropicCache", "MyAnthropic")
    assert CACHE_MODELS["anthropic"] is AnthropicCache
    with pytest.raises(TypeError, match="abstract"):
        CacheModel()  # type: ignore[abstract]  # quote, commit and describe are the contract


def test_a_second_dashboard_page_under_a_taken_name_is_refused():
    """Defect 24."""
    pages = [("start", "Start", "home"), ("replay", "Replay", "payments"), ("start", "Begin", "flag")]
    with pytest.raises(DuplicateRegistrationError) as excinfo:
        registered_pages(pages)
    _refused(excinfo, "dashboard page 'start'", "('start', 'Start', 'home')", "('start', 'Begin', 'flag')")
    assert [p.name for p in registered_pages(pages[:2])] == ["start", "replay"]


def test_a_second_readme_table_or_section_is_refused():
    """Defect 24."""
    table = next(iter(TABLES))
    with pytest.raises(DuplicateRegistrationError) as excinfo:
        @register_table(table, source="x.json", command="true")
        def my_table(results):
            return ""
    _refused(excinfo, f"table {table!r}", TABLES[table].render.__qualname__, "my_table")
    with pytest.raises(DuplicateRegistrationError) as excinfo:
        @register_section("prices")
        def my_prices(root):
            return ""
    _refused(excinfo, "section 'prices'", "pruner.readme.sections.prices", "my_prices")
    assert SECTIONS["prices"].__qualname__ == "prices"


def test_registering_the_same_definition_again_is_not_a_second_registration():
    spec = STRATEGIES["full"]
    assert STRATEGIES.add("full", spec) is spec
    rule = RULES["ttl"]
    assert RULES.add("ttl", rule) is rule


def test_a_tracker_without_the_protocol_is_refused_with_the_rule_name():
    class HalfTracker:  # advance but no removal: not an ExpiryTracker
        def __init__(self, index, config):
            pass

        def advance(self, start):
            return set()

    @register_rule("test_half_tracked", stage="expired", description="test only", tracker=HalfTracker)
    def _never(index, alive, config):
        return []
    try:
        with pytest.raises(ConfigurationError, match=r"rule 'test_half_tracked': its tracker \S*HalfTracker is not "
                                                     "an ExpiryTracker"):
            IncrementalPruner(PruneConfig())
    finally:
        del RULES["test_half_tracked"]
    # without it, the built-in trackers satisfy their protocols and carry state
    pruner = IncrementalPruner(PruneConfig())
    assert not pruner.append([Message(id="u1", role="user", content="hi")]).recomputed
