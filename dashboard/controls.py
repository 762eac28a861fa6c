"""A setting as a dashboard control: its label and tooltip come from its settings dataclass field.

The pages pass ``**control(ReplaySettings, "reserve_tokens")`` to a widget instead of
restating the setting's words (``pruner.setting_fields`` holds them, and the CLI's
``--help`` reads the same field); defaults come from the dataclasses too.

>>> from pruner.replay import ReplaySettings
>>> control(ReplaySettings, "reserve_tokens")
{'label': 'Reserve tokens', 'help': 'Compact (and truncate) when the context exceeds window minus this.'}
>>> options(ReplaySettings, "ttl")
['5m', '1h']
>>> label_of("keep_recent_tokens"), label_of("max_bytes")
('Keep-recent tokens', None)
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from pruner.compaction import CompactionSettings
from pruner.engine.prune import PruneConfig
from pruner.replay import ReplaySettings
from pruner.setting_fields import describe

#: The settings dataclasses whose fields the dashboard shows as controls, searched in this order
#: for the label of a setting an error names.
SETTINGS_CLASSES = (ReplaySettings, CompactionSettings, PruneConfig)


def tooltip(text: str) -> str:
    """A setting's help as a sentence: capital first letter, full stop."""
    text = text[:1].upper() + text[1:]
    return text if text.endswith(".") else text + "."


class Control(TypedDict):
    """A widget's ``label`` and ``help`` keywords: a TypedDict, so ``st.slider(**control(...), ...)``
    type-checks against Streamlit's signature (a plain dict[str, str] would claim every keyword)."""

    label: str
    help: NotRequired[str]


def control(cls: type, name: str, *, with_help: bool = True) -> Control:
    """``label`` and ``help`` for the widget of ``cls``'s setting ``name`` (``with_help=False``: the label
    alone, when the label already says all the help would)."""
    s = describe(cls, name)
    return {"label": s.label, "help": tooltip(s.help)} if with_help else {"label": s.label}


def options(cls: type, name: str) -> list[str]:
    """The choices of ``cls``'s setting ``name``, in the dataclass's order."""
    return list(describe(cls, name).choices or ())


def label_of(setting: str | None) -> str | None:
    """The label of the control for the library setting ``setting``, or None when no page shows one."""
    for cls in SETTINGS_CLASSES:
        try:
            return describe(cls, setting or "").label
        except KeyError:
            continue
    return None
