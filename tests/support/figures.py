"""A plotly figure as the browser receives it, for tests that check charts through their JSON."""

from __future__ import annotations

import base64
import json

import numpy as np


def _decode(value):
    """A plotly typed-array spec (``{"dtype", "bdata", "shape"}``, how numpy arrays are sent) as lists."""
    if not (isinstance(value, dict) and "bdata" in value):
        return value
    array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
    if "shape" in value:
        array = array.reshape([int(n) for n in str(value["shape"]).split(",")])
    return array.tolist()


def spec(fig) -> dict:
    """The figure's JSON as the browser gets it, with typed arrays decoded back to lists."""
    figure = json.loads(fig.to_json())
    for trace in figure["data"]:
        for key in ("x", "y", "customdata", "base", "width"):
            if key in trace:
                trace[key] = _decode(trace[key])
    return figure
