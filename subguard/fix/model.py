"""The records of a fix: where a value is written, the edits that change it, and the fix itself."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Safety = Literal["safe", "unsafe"]
SAFE: Safety = "safe"
UNSAFE: Safety = "unsafe"


@dataclass(frozen=True)
class Slice:
    """The source text that holds a value: `text[start:end]` decodes to the value in its language.

    `style` says how to write a new value there (the quote and prefix of a Python string, the scalar
    style of a YAML value, ...); the language module that found the slice encodes with it."""

    lang: str
    start: int
    end: int
    style: str = ""


@dataclass(frozen=True)
class Site:
    """Where one subscription's expression is written and who else reads it.

    `name` is the constant or placeholder key the value comes from ("" for a literal at the call);
    `uses` are the places that reference that name (file, offset), `claimed` the part of them inside
    this subscription's own declaration."""

    file: Path
    path: str  # as the finding shows it, relative to its scan root
    slice: Slice
    value: str
    name: str = ""
    uses: tuple[tuple[Path, int, str], ...] = ()  # (file, offset, "path:line") of every reference
    declaration: tuple[Path, int, int] | None = None  # the subscription's own call, annotation or entry
    doubt: str = ""  # why changing the definition may change more than this subscription

    @property
    def key(self) -> tuple[Path, int, int]:
        return (self.file, self.slice.start, self.slice.end)


@dataclass(frozen=True)
class Edit:
    """Replace `text[start:end]` of `file` with `new` (`lang` re-parses the result)."""

    file: Path
    path: str
    lang: str
    start: int
    end: int
    new: str
    value: str | None = None  # what the new characters must read back as (None: a removal)
    style: str = ""


@dataclass(frozen=True)
class Fix:
    """The repair of one finding: its edits, whether it is safe, what it does and why it is unsafe."""

    rule: str
    fingerprint: str
    safety: Safety
    description: str
    edits: tuple[Edit, ...]
    reasons: tuple[str, ...] = ()

    @property
    def files(self) -> frozenset[Path]:
        return frozenset(e.file for e in self.edits)
