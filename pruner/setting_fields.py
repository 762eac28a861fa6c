"""One source for each setting: its default, its help, its command-line flag and its dashboard label.

A settings dataclass (``PruneConfig``, ``CompactionSettings``, ``ReplaySettings``)
declares each field a person can change with ``setting(...)``. The CLI
(``pruner.cli.common.add_setting_arguments``) and the dashboard
(``dashboard.controls``) read the field instead of restating it, so a default is
written once and a flag's help and a control's tooltip are the same sentence.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Knobs:
...     reserve_tokens: int = setting(16, help="tokens kept free", label="Reserve tokens", minimum=0)
...     inherit_cold: bool = setting(True, help="cold stays cold", label="Inherit cold",
...                                  flag_help="do not inherit")
>>> info = describe(Knobs, "reserve_tokens")
>>> info.default, info.flag, info.label, info.help
(16, '--reserve-tokens', 'Reserve tokens', 'tokens kept free')
>>> describe(Knobs, "inherit_cold").flag
'--no-inherit-cold'
>>> [s.name for s in described(Knobs)]
['reserve_tokens', 'inherit_cold']
"""

from __future__ import annotations

import dataclasses
from dataclasses import MISSING, dataclass
from typing import Any

_KEY = "pruner_setting"


@dataclass(frozen=True)
class SettingInfo:
    """What the front ends need to show one setting.

    ``flag``: the CLI's spelling (``--reserve-tokens``; ``--no-X`` for a switch that is on by
    default); ``flag_help``: that flag's help when it differs from ``help`` (a ``--no-`` flag says
    what switching off does). ``minimum``: the smallest whole number accepted (0 or 1), or None.
    """

    name: str
    default: Any
    help: str
    label: str
    flag: str
    flag_help: str
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    minimum: int | None = None


def setting(default: Any = MISSING, *, help: str, label: str, flag: str | None = None, flag_help: str | None = None,
            metavar: str | None = None, choices: tuple[str, ...] | None = None, minimum: int | None = None,
            default_factory: Any = MISSING) -> Any:
    """A dataclass ``field`` that carries its help, label, flag and limits in its metadata."""
    meta = {_KEY: {"help": help, "label": label, "flag": flag, "flag_help": flag_help, "metavar": metavar,
                   "choices": choices, "minimum": minimum}}
    if default_factory is not MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def _info(f: dataclasses.Field[Any]) -> SettingInfo:
    meta = f.metadata[_KEY]
    if f.default is not MISSING:
        default = f.default
    elif f.default_factory is not MISSING:
        default = f.default_factory()
    else:  # setting() always gives one or the other
        raise TypeError(f"setting {f.name!r} has no default")
    flag = meta["flag"] or ("--no-" if default is True else "--") + f.name.replace("_", "-")
    return SettingInfo(name=f.name, default=default, help=meta["help"], label=meta["label"], flag=flag,
                       flag_help=meta["flag_help"] or meta["help"], metavar=meta["metavar"],
                       choices=meta["choices"], minimum=meta["minimum"])


def described(cls: type) -> tuple[SettingInfo, ...]:
    """Every field of ``cls`` declared with ``setting``, in field order."""
    return tuple(_info(f) for f in dataclasses.fields(cls) if _KEY in f.metadata)


def describe(cls: type, name: str) -> SettingInfo:
    """The field ``name`` of ``cls`` (``KeyError`` when it was not declared with ``setting``)."""
    for f in dataclasses.fields(cls):
        if f.name == name and _KEY in f.metadata:
            return _info(f)
    raise KeyError(f"{cls.__name__}.{name} is not declared with setting()")


def default_of(cls: type, name: str) -> Any:
    """The default of ``cls``'s field ``name`` (for another dataclass whose field shares it)."""
    return describe(cls, name).default
