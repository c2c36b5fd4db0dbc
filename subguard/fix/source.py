"""The files a fix reads and edits: decoded once, with offsets by line and column."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Source:
    """One file as read: its bytes (to tell whether it changed before writing) and its text.

    Offsets are indices into `text`; line and column are 1-based and count characters (code points),
    as subguard's locations do. Line ends are kept as written (CRLF stays CRLF)."""

    path: Path
    data: bytes
    text: str
    encoding: str
    starts: tuple[int, ...] = field(default=(), repr=False)

    @classmethod
    def read(cls, path: Path) -> Source:
        data = path.read_bytes()
        try:
            text, encoding = data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:  # a .properties file in ISO-8859-1, as Properties.load reads it
            text, encoding = data.decode("latin-1"), "latin-1"
        return cls(path, data, text, encoding, line_starts(text))

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def offset(self, line: int, column: int) -> int:
        """The offset of 1-based (line, column), clamped to the text."""
        if line < 1 or line > len(self.starts):
            return len(self.text)
        return min(self.starts[line - 1] + max(column, 1) - 1, len(self.text))

    def position(self, offset: int) -> tuple[int, int]:
        """The 1-based (line, column) of an offset."""
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self.starts[lo] + 1


def line_starts(text: str) -> tuple[int, ...]:
    """Offsets where each line starts (after \\n, \\r\\n or a lone \\r, as tools count lines)."""
    starts = [0]
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\r" and i + 1 < n and text[i + 1] == "\n":
            i += 1
        if ch in "\r\n":
            starts.append(i + 1)
        i += 1
    return tuple(starts)


class Files:
    """Every file a run's fixes read, each read once."""

    def __init__(self) -> None:
        self._read: dict[Path, Source | None] = {}

    def get(self, path: Path) -> Source | None:
        if path not in self._read:
            try:
                self._read[path] = Source.read(path)
            except OSError:
                self._read[path] = None
        return self._read[path]
