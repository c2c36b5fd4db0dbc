"""Stream one evidence file into events with bounded memory (gzip by magic bytes, any size).

Log files are read line by line; a record is a header line plus its continuation lines (stack
traces, wrapped text), and only records that can matter are kept while they are assembled, up to
`MAX_RECORD_LINES`/`MAX_RECORD_CHARS`. mqadmin outputs go through their table parsers.
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain, islice
from typing import IO

from subguard.evidence.events import Event
from subguard.evidence.formats import MQADMIN_FORMATS, detect
from subguard.evidence.logline import split_header
from subguard.evidence.messages import INTERESTING, parse_message
from subguard.evidence.mqadmin import parse_mqadmin

MAX_RECORD_LINES = 200
MAX_RECORD_CHARS = 65536
HEAD_LINES = 200
_PULL_EXCEPTION = "execute the pull request exception"


@dataclass(frozen=True)
class FileStats:
    """How one file was read: every line is a record header, a continuation, or garbled."""

    path: str
    format: str
    compressed: bool
    lines: int = 0
    records: int = 0
    continuation: int = 0
    garbled: int = 0
    events: int = 0
    error: str = ""


def open_text(path: str) -> tuple[IO[str], bool]:
    """A text stream over `path` (gzip detected by magic bytes), undecodable bytes replaced."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace"), True
    return open(path, encoding="utf-8", errors="replace"), False


class EvidenceFile:
    """One file to read: `events()` streams its events once; `stats` is final after that."""

    def __init__(self, path: str, display: str | None = None, default_group: str = "") -> None:
        self.path = path
        self.display = display if display is not None else path
        self.default_group = default_group
        self.stats = FileStats(self.display, "", False)

    def events(self) -> Iterator[Event]:
        try:
            stream, compressed = open_text(self.path)
        except OSError as exc:
            self.stats = FileStats(self.display, "", False, error=exc.strerror or str(exc))
            return
        with stream:
            yield from self.read(stream, compressed)

    def read(self, lines: Iterable[str], compressed: bool = False) -> Iterator[Event]:
        """Events of the file's text lines in order (newlines kept or not): what `events()` does
        once the file is open. A Spark task calls it with the lines the text source read."""
        rest = iter(lines)
        try:
            head = list(islice(rest, HEAD_LINES))
        except (OSError, EOFError, zlib.error) as exc:
            self.stats = FileStats(self.display, "", compressed, error=str(exc))
            return
        name = os.path.basename(self.path.removesuffix(".gz"))
        fmt = detect(name, [h.rstrip("\r\n") for h in head])
        self.stats = FileStats(self.display, fmt, compressed)
        numbered = _numbered(head, rest)
        if fmt in MQADMIN_FORMATS:
            yield from self._mqadmin(numbered)
        else:
            yield from self._log(numbered)

    def _mqadmin(self, lines: Iterator[tuple[int, str]]) -> Iterator[Event]:
        count, total = 0, 0

        def counted() -> Iterator[tuple[int, str]]:
            nonlocal total
            for item in lines:
                total = item[0]
                yield item

        for event in parse_mqadmin(counted(), self.default_group):
            count += 1
            yield event.at(self.display, event.line)
        self.stats = FileStats(self.display, self.stats.format, self.stats.compressed, lines=total, events=count)

    def _log(self, lines: Iterator[tuple[int, str]]) -> Iterator[Event]:
        counts = LogCounts()
        count = 0
        try:
            for no, ts, text in log_records(lines, counts):
                event = parse_message(text, ts)
                if event is not None:
                    count += 1
                    yield event.at(self.display, no)
        except (OSError, EOFError, zlib.error) as exc:
            self.stats = FileStats(self.display, self.stats.format, self.stats.compressed, counts.lines, counts.records,
                                   counts.continuation, counts.garbled, count, f"read stopped at line {counts.lines}: {exc}")
            return
        self.stats = FileStats(self.display, self.stats.format, self.stats.compressed, counts.lines, counts.records,
                               counts.continuation, counts.garbled, count)


@dataclass
class LogCounts:
    """How the lines of a log were taken so far (updated while `log_records` runs)."""

    lines: int = 0  # number of the last line read
    records: int = 0
    continuation: int = 0
    garbled: int = 0


def log_records(lines: Iterable[tuple[int, str]], counts: LogCounts | None = None) -> Iterator[tuple[int, float | None, str]]:
    """The records of a log that can matter, in order: (header line number, timestamp, message with
    its continuation lines joined). `lines` are (line number, text) in file order; a record is a
    header line plus the headerless lines after it (stack traces, wrapped text). Pure: the reader
    and the Spark audit both assemble records with it."""
    c = counts if counts is not None else LogCounts()
    open_record = False
    pending: list[str] | None = None  # parts of an interesting record being assembled
    pending_at = 0
    pending_ts: float | None = None
    pending_chars = 0
    for no, raw in lines:
        c.lines = no
        line = raw.rstrip("\r\n")
        # fast path: a record header that cannot matter needs no parsing at all
        if looks_like_header(line) and INTERESTING.search(line) is None and _PULL_EXCEPTION not in line:
            header: tuple[float | None, str] | None = (None, "")
        else:
            header = split_header(line)
        if header is None:
            if not open_record or "\x00" in line:
                c.garbled += 1 if line.strip() else 0
                continue
            c.continuation += 1
            if pending is not None and len(pending) < MAX_RECORD_LINES and pending_chars < MAX_RECORD_CHARS:
                pending.append(line)
                pending_chars += len(line)
            continue
        if pending is not None:
            yield pending_at, pending_ts, "".join(pending)
            pending = None
        c.records += 1
        open_record = True
        ts, msg = header
        if msg and (INTERESTING.search(msg) is not None or msg.startswith(_PULL_EXCEPTION)):
            pending, pending_at, pending_ts, pending_chars = [msg], no, ts, len(msg)
    if pending is not None:
        yield pending_at, pending_ts, "".join(pending)


def looks_like_header(line: str) -> bool:
    """Cheap test for `yyyy-MM-dd HH:mm:ss` / `HH:mm:ss.SSS [` starts (split_header decides for real)."""
    return len(line) > 20 and line[0].isdigit() and ((line[4] == "-" and line[13] == ":") or (line[2] == ":" and line[5] == ":"))


def _numbered(head: list[str], rest: Iterator[str]) -> Iterator[tuple[int, str]]:
    return enumerate(chain(head, rest), 1)
