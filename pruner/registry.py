"""The registries of the extension points: a name is registered once.

Rules, formats, replay strategies, cache models (and the dashboard's pages) are
each looked up by name in a ``Registry``: a dict that refuses a second
registration under a taken name, with an error naming both, instead of letting
the second silently replace the first. Registering the same object again, or a
new version of the same definition (the same module and name, as a reloaded
module makes), replaces it.

>>> shapes = Registry("shape", origin=lambda fn: fn.__qualname__)
>>> def square(): ...
>>> def other_square(): ...
>>> shapes.add("square", square) is square
True
>>> shapes.add("square", other_square)
Traceback (most recent call last):
...
pruner.registry.DuplicateRegistrationError: shape 'square' is registered twice: by square and by other_square
"""

from __future__ import annotations

from typing import Callable, Dict, TypeVar

from .errors import ConfigurationError

T = TypeVar("T")


class DuplicateRegistrationError(ConfigurationError):
    """A second registration under a taken name; ``first`` and ``second`` say where each comes from."""

    def __init__(self, kind: str, name: str, first: str, second: str) -> None:
        self.kind, self.name, self.first, self.second = kind, name, first, second
        super().__init__(f"{kind} {name!r} is registered twice: by {first} and by {second}")


def origin_of(obj: object) -> str:
    """Where a registered definition comes from: ``module.qualname`` (a module: its name)."""
    name = getattr(obj, "__qualname__", None)
    module = getattr(obj, "__module__", None)
    if name is None:  # a module, or an instance: its own name or its class's
        name = getattr(obj, "__name__", None)
        if name is not None and module is None:
            return str(name)
        name = name or type(obj).__qualname__
    return f"{module}.{name}" if module else str(name)


class Registry(Dict[str, T]):
    """A name -> entry dict whose ``add`` refuses a taken name (``DuplicateRegistrationError``).

    ``kind`` names the extension point in the error ("rule", "format", ...); ``origin`` says where an
    entry comes from (the function, class or module that defines it)."""

    def __init__(self, kind: str, *, origin: Callable[[T], str]) -> None:
        super().__init__()
        self.kind = kind
        self.origin = origin

    def add(self, name: str, entry: T) -> T:
        taken = self.get(name)
        if taken is not None and taken is not entry:
            first, second = self.origin(taken), self.origin(entry)
            if first != second:
                raise DuplicateRegistrationError(self.kind, name, first, second)
        self[name] = entry
        return entry
