"""Java facts pickle compactly: a record's fields as a tuple, not a dict named field by field.

Every Java file's facts are pickled into the content cache on a cold run and loaded on every run
that links (a one-file edit of a repository loads them all): on apache/rocketmq the tuples make
the pickles a quarter smaller and their loading a quarter faster. The cache is keyed by the code's
stamp, so a pickle never meets another version of a record.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def compact(cls: type[T]) -> type[T]:
    """`cls` (a dataclass) pickled with its fields' values as one tuple, in declaration order."""
    names = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]

    def state(self: Any) -> tuple[Any, ...]:
        values = self.__dict__
        return tuple([values[n] for n in names])

    def restore(self: Any, values: tuple[Any, ...]) -> None:
        self.__dict__.update(zip(names, values, strict=True))

    setattr(cls, "__getstate__", state)  # noqa: B010 - a method of the class, given after its making
    setattr(cls, "__setstate__", restore)  # noqa: B010
    return cls
