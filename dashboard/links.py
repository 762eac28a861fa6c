"""The page's URL says what is open, so a reload keeps it and a copied link reopens the same view.

Parameters (only the ones that differ from the defaults are written):

* the source: ``sample=NAME``, ``workload=NAME&turns=N&seed=S``, or ``upload=SHA256``
  (an upload the server still holds), with ``format=NAME`` when the format was
  chosen rather than detected, and ``dialogue=N`` for a file holding several;
* the pruning settings: ``expire=0``, ``dedupe=0``, ``restore=0``,
  ``threshold=X``, ``encoding=NAME`` (the library's ``PruneConfig`` fields);
* whatever a page adds for its own view (the explorer: ``msg=N``, the message
  being inspected; the guide: ``step=N``).

A bad value raises a ``PrunerError`` naming the parameter; the page shows it
and keeps what it had.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, overload

from pruner import ENCODINGS, PruneConfig
from pruner.errors import ConfigurationError, FormatError

from .loading import LoadedFile, LoadedSession, load_sample_file, load_upload, load_workload
from .logic import corpus

#: Every parameter this module reads or writes (a page's own ones are added by the page).
SOURCE_KEYS = ("sample", "workload", "turns", "seed", "upload", "format", "dialogue", "batch", "batch_session")
SETTING_KEYS = ("expire", "dedupe", "restore", "threshold", "encoding")
_DEFAULT = PruneConfig()
_FLAGS = {"expire": "expire", "dedupe": "deduplicate", "restore": "restore"}


def source_params(loaded: LoadedSession) -> dict[str, str]:
    """The parameters that reopen ``loaded`` (none for a source another page names in its own way)."""
    if loaded.link:
        return dict(loaded.link)
    if loaded.origin not in ("sample", "upload", "workload"):
        return {}
    if loaded.origin == "workload":
        _, name, turns, seed = loaded.key.split(":")
        return {"workload": name, "turns": turns, "seed": seed}
    params = {"sample": loaded.file} if loaded.origin == "sample" else {"upload": loaded.digest}
    if not loaded.detected:
        params["format"] = loaded.format
    if loaded.dialogue is not None:
        params["dialogue"] = str(loaded.dialogue)
    return params


def settings_params(config: PruneConfig) -> dict[str, str]:
    """The parameters for the settings that differ from the library's defaults."""
    params = {name: "0" for name, field in _FLAGS.items() if not getattr(config, field)}
    if config.near_duplicate_threshold != _DEFAULT.near_duplicate_threshold:
        params["threshold"] = f"{config.near_duplicate_threshold:g}"
    if config.encoding != _DEFAULT.encoding:
        params["encoding"] = config.encoding
    return params


def settings_from(params: Mapping[str, str]) -> PruneConfig:
    """The settings a link names (the defaults for what it leaves out); ``ConfigurationError`` if bad."""
    changes: dict = {}
    for name, field in _FLAGS.items():
        if name in params:
            if params[name] not in ("0", "1"):
                raise ConfigurationError(f"the link's {name} must be 0 or 1, not {params[name]!r}")
            changes[field] = params[name] == "1"
    if "threshold" in params:
        try:
            changes["near_duplicate_threshold"] = float(params["threshold"])
        except ValueError:
            raise ConfigurationError(f"the link's threshold must be a number, not {params['threshold']!r}") from None
    if "encoding" in params:
        if params["encoding"] not in ENCODINGS:
            raise ConfigurationError(f"the link's encoding must be one of {', '.join(ENCODINGS)}")
        changes["encoding"] = params["encoding"]
    return replace(_DEFAULT, **changes)  # PruneConfig checks the threshold's range


@overload
def _whole(params: Mapping[str, str], name: str, default: int) -> int: ...
@overload
def _whole(params: Mapping[str, str], name: str, default: None) -> int | None: ...


def _whole(params: Mapping[str, str], name: str, default: int | None) -> int | None:
    if name not in params:
        return default
    try:
        value = int(params[name])
    except ValueError:
        raise FormatError(f"the link's {name} must be a whole number, not {params[name]!r}", file="link") from None
    if value < 0:
        raise FormatError(f"the link's {name} must be 0 or more", file="link")
    return value


@dataclass(frozen=True)
class Opened:
    """What a link opens: one session, or a file whose dialogue is still to be picked."""

    loaded: LoadedSession | None
    file: LoadedFile | None


def names_a_source(params: Mapping[str, str]) -> bool:
    return any(k in params for k in ("sample", "workload", "upload", "batch"))


def open_source(params: Mapping[str, str]) -> Opened:
    """Load what the link names; ``PrunerError`` when it cannot (the page keeps what it had)."""
    if "workload" in params:
        loaded = load_workload(params["workload"], turns=_whole(params, "turns", 200),
                               seed=_whole(params, "seed", 0))
        return Opened(loaded=loaded, file=None)
    if "batch" in params:  # a session of a batch folder, as the Corpus page opened it
        folder = corpus.read_corpus(params["batch"])
        loaded = replace(corpus.open_session(folder, params.get("batch_session", "")),
                         link=(("batch", params["batch"]), ("batch_session", params.get("batch_session", ""))))
        return Opened(loaded=loaded, file=None)
    dialogue = _whole(params, "dialogue", None)
    if "sample" in params:
        file = load_sample_file(params["sample"])
    elif "upload" in params:
        file = load_upload(params["upload"], format=params.get("format") or None)
    else:
        raise FormatError("the link names no sample, workload or upload", file="link")
    if dialogue is None and len(file.sessions) > 1:
        return Opened(loaded=None, file=file)
    return Opened(loaded=file.dialogue(dialogue), file=file if len(file.sessions) > 1 else None)


def merged(current: Mapping[str, str], *, loaded: LoadedSession | None, config: PruneConfig,
           page: Mapping[str, str | None] | None = None, page_keys: tuple[str, ...] = ()) -> dict[str, str]:
    """``current`` with this module's (and the page's) parameters replaced by what is open now."""
    ours = set(SOURCE_KEYS) | set(SETTING_KEYS) | set(page_keys)
    out = {k: v for k, v in current.items() if k not in ours}
    if loaded is not None:
        out |= source_params(loaded)
    out |= settings_params(config)
    out |= {k: v for k, v in (page or {}).items() if v is not None}
    return out


#: The Corpus page's own parameters: the batch folder and the table's filters; on a logs folder, the
#: roll-up's grouping (``by``, dashboard.logic.corpus_rollup).
CORPUS_KEYS = ("corpus", "formats", "reduction", "show", "q", "by")


def corpus_filters(params: Mapping[str, str], *, formats: list[str], choices: tuple[str, ...],
                   low: float) -> tuple[dict[str, object], list[str]]:
    """The Corpus table's filter widgets' values a link names, and a sentence per unusable one.

    >>> values, problems = corpus_filters({"formats": "pi,x", "reduction": "10:90", "show": "all"},
    ...                                   formats=["pi"], choices=("all", "errors only"), low=0.0)
    >>> values
    {'corpus_filter_format': ['pi'], 'corpus_filter_reduction': (10.0, 90.0), 'corpus_filter_errors': 'all'}
    >>> problems
    ["the link's formats name ones this batch does not hold (x)"]
    """
    values: dict[str, object] = {}
    problems = []
    if "formats" in params:
        named = [f for f in params["formats"].split(",") if f]
        values["corpus_filter_format"] = [f for f in named if f in formats]
        unknown = [f for f in named if f not in formats]
        if unknown:
            problems.append(f"the link's formats name ones this batch does not hold ({', '.join(unknown)})")
    if "reduction" in params:
        try:
            lo, hi = (float(x) for x in params["reduction"].split(":"))
            if not low <= lo <= hi <= 100:
                raise ValueError
            values["corpus_filter_reduction"] = (lo, hi)
        except ValueError:
            problems.append(f"the link's reduction must be LOW:HIGH between {low:g} and 100, "
                            f"not {params['reduction']!r}")
    if "show" in params:
        if params["show"] in choices:
            values["corpus_filter_errors"] = params["show"]
        else:
            problems.append(f"the link's show must be one of {', '.join(choices)}")
    if "q" in params:
        values["corpus_filter_text"] = params["q"]
    return values, problems


def corpus_params(folder: str, *, formats: list[str], reduction: tuple[float, float], full: tuple[float, float],
                  show: str, default_show: str, text: str) -> dict[str, str]:
    """The URL parameters that reopen the Corpus page's folder and filters (only the ones that filter)."""
    out = {"corpus": folder}
    if formats:
        out["formats"] = ",".join(formats)
    if tuple(reduction) != tuple(full):
        out["reduction"] = f"{reduction[0]:g}:{reduction[1]:g}"
    if show != default_show:
        out["show"] = show
    if text:
        out["q"] = text
    return out


def zoom_text(x_range: tuple[float, float] | None) -> str | None:
    """A timeline zoom range as a URL value ("1637.5:1658.5"), ``None`` for the whole session.

    >>> zoom_text((1637.5, 1658.5)), zoom_from("1637.5:1658.5"), zoom_from("bad"), zoom_from("5:1")
    ('1637.5:1658.5', (1637.5, 1658.5), None, None)
    """
    return None if x_range is None else f"{x_range[0]:g}:{x_range[1]:g}"


def zoom_from(text: str | None) -> tuple[float, float] | None:
    """The zoom range a URL names (``None`` when it names none or a bad one: the whole session is shown)."""
    try:
        x0, x1 = (float(v) for v in (text or "").split(":"))
    except ValueError:
        return None
    return (x0, x1) if x0 < x1 and all(abs(v) < 1e9 for v in (x0, x1)) else None
