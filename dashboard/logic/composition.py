"""What fills the context, for the Explorer and the Replay page: ``pruner.replay.composition`` shaped
into the tables beside its chart. Pure (no Streamlit).

>>> from pruner.replay.composition import Composition
>>> full = Composition("full", "main", (0, 1), (1, 1), ("user", "file reads"), ((10, 0), (10, 30)))
>>> cut = Composition("clear_tool_uses", "main", (0, 1), (1, 1), ("user",), ((10,), (10,)))
>>> removed_frame({"full": full, "clear_tool_uses": cut}, "full")["clear_tool_uses"].tolist()
['0 %', '100 %']
"""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from pruner.replay.composition import Composition, removed_by_kind

#: What the removal table measures against, in order of preference (nothing removed; else the recording).
REFERENCES = ("full", "as_recorded")


def reference_of(names) -> str | None:
    return next((n for n in REFERENCES if n in names), None)


def _cell(share: float | None, added: int) -> str:
    if share is None:
        return f"adds {added:,} tok" if added else "—"
    if share < 0:
        return f"sends {100 * -share:.0f} % more"
    return f"{100 * share:.0f} %"


def removed_frame(compositions: Mapping[str, Composition], reference: str) -> pd.DataFrame:
    """One row per kind: its share of the reference's context at the last request, then per strategy the
    share of the reference's tokens of that kind (summed over the requests) it did not send."""
    removed = removed_by_kind(compositions, reference)
    ref = compositions[reference]
    shares = ref.final_shares()
    kinds = list(dict.fromkeys([*ref.kinds, *(k for d in removed.values() for k in d)]))
    rows = []
    for kind in kinds:
        row = {"kind": kind, f"{reference} at the end": f"{100 * shares.get(kind, 0.0):.1f} %"}
        for name, by_kind in removed.items():
            row[name] = _cell(by_kind.get(kind), compositions[name].sent().get(kind, 0))
        rows.append(row)
    return pd.DataFrame(rows)


def end_sentence(comp: Composition) -> str:
    """The kinds that hold most of the context at the last request, largest first."""
    shares = sorted(comp.final_shares().items(), key=lambda kv: (-kv[1], kv[0]))
    top = [f"{kind} {100 * share:.1f} %" for kind, share in shares if share >= 0.005][:4]
    if not top:
        return "The context is empty at the last request."
    total = comp.totals()[-1]
    return f"At the last request ({total:,} tokens): " + ", ".join(top) + "."
