"""``PruneConfig``: the settings of a prune, which the rules read and ``prune`` runs by.

It stands below the rules (``pruner.rules`` names it in every family's signature) and below
``pruner.engine.prune``, which imports the rules: here, neither has to import the other's
importer. ``pruner.engine.prune`` still exports it, its public home.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Protocol

from .fileops import DEFAULT_FILE_TOOLS, FileTools
from ..errors import ConfigurationError
from ..setting_fields import setting
from ..tokens import DEFAULT_ENCODING, ENCODINGS


class RuleFamilyName(Protocol):
    """What ``PruneConfig.family_on`` reads of a rule family (``pruner.rules.Rule``), named by shape
    so this module need not import the rules that import it."""

    @property
    def name(self) -> str: ...

    @property
    def stage(self) -> str: ...

    @property
    def emits(self) -> Iterable[str]: ...


ORPHAN_POLICIES = ("placeholder", "drop_pair")
DEFAULT_NEAR_DUPLICATE_THRESHOLD = 0.8


@dataclass(frozen=True, kw_only=True)
class PruneConfig:
    """Settings for ``prune``. Every field is keyword-only and has a sensible default.

    ``expire``, ``deduplicate`` and ``restore`` switch the three passes;
    ``disabled_rules`` switches single rules off by name (see ``pruner.rules.RULES``).
    ``near_duplicate_threshold`` is the share of a text's word 3-grams that must
    already appear in one earlier kept text for it to count as a near-duplicate.
    ``orphan_policy`` says what the export sends for a kept tool call whose
    result was pruned: a short ``placeholder`` naming the newer result, or
    ``drop_pair``: drop the call too when its assistant message holds nothing else.
    """

    expire: bool = setting(True, label="Pass 1: expire superseded, stale and timed-out messages",
                           help="pass 1: expire superseded, stale and timed-out messages",
                           flag_help="switch off pass 1 (expired context)")
    deduplicate: bool = setting(True, label="Pass 2: remove exact and near duplicates", flag="--no-dedupe",
                                help="pass 2: remove exact and near duplicates",
                                flag_help="switch off pass 2 (duplicate context)")
    restore: bool = setting(True, label="Pass 3: restore what kept messages depend on",
                            help="pass 3: restore what kept messages depend on",
                            flag_help="switch off pass 3 (dependency restoration)")
    disabled_rules: frozenset[str] = frozenset()
    near_duplicate_threshold: float = setting(DEFAULT_NEAR_DUPLICATE_THRESHOLD, label="Near-duplicate threshold",
                                              help="share of a text's word 3-grams already in one kept text",
                                              metavar="X")
    file_tools: FileTools = DEFAULT_FILE_TOOLS
    orphan_policy: str = setting("placeholder", label="Orphaned calls", choices=ORPHAN_POLICIES,
                                 help="what the export sends for a kept call whose result was pruned")
    encoding: str = setting(DEFAULT_ENCODING, label="Token counter encoding", choices=ENCODINGS,
                            help="tiktoken encoding")

    def __post_init__(self) -> None:
        threshold = self.near_duplicate_threshold
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
            raise ConfigurationError(f"near_duplicate_threshold is {threshold!r}; it must be a number in (0, 1]",
                                     setting="near_duplicate_threshold")
        if self.orphan_policy not in ORPHAN_POLICIES:
            raise ConfigurationError(f"orphan_policy is {self.orphan_policy!r}; "
                                     f"expected one of {', '.join(ORPHAN_POLICIES)}", setting="orphan_policy")
        object.__setattr__(self, "disabled_rules", frozenset(self.disabled_rules))

    def stage_on(self, stage: str) -> bool:
        return {"expired": self.expire, "duplicate": self.deduplicate, "restored": self.restore}[stage]

    def family_on(self, family: RuleFamilyName) -> bool:
        """A rule family runs when its stage is on and neither it nor a name it emits is disabled."""
        off = self.disabled_rules
        return self.stage_on(family.stage) and family.name not in off and not (
            family.stage == "restored" and off.intersection(family.emits))
