"""Stream one evidence file into events with bounded memory (gzip by magic bytes, any size).

A record is a header line plus its continuation lines (stack traces, wrapped text), and only records
that can matter are kept while they are assembled, up to `MAX_RECORD_LINES`/`MAX_RECORD_CHARS`. An
open log file is read in blocks: C-level searches find the few lines that are not plain record
headers (`ANCHORS`, headerless lines) and only those reach Python; the line reader (`log_records`,
used by the Spark audit on the text source's lines) gives the same records. mqadmin outputs go
through their table parsers.
"""

from __future__ import annotations

import gzip
import io
import os
import re
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
MAX_LINE_CHARS = 1 << 22  # block mode: longer lines are cut (a record keeps MAX_RECORD_CHARS anyway)
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
        replay: Iterator[str] | None = None  # an open file: its blocks of whole lines, from the start
        rest: Iterator[str] = iter(())
        try:
            if isinstance(lines, io.TextIOBase):
                replay, head = _with_head(line_blocks(lines))
            else:
                rest = iter(lines)
                head = list(islice(rest, HEAD_LINES))
        except (OSError, EOFError, zlib.error) as exc:
            self.stats = FileStats(self.display, "", compressed, error=str(exc))
            return
        name = os.path.basename(self.path.removesuffix(".gz"))
        fmt = detect(name, [h.rstrip("\r\n") for h in head])
        self.stats = FileStats(self.display, fmt, compressed)
        counts = LogCounts()
        if replay is None:
            numbered = _numbered(head, rest)
            yield from (
                self._mqadmin(numbered) if fmt in MQADMIN_FORMATS else self._log(log_records(numbered, counts), counts)
            )
        elif fmt in MQADMIN_FORMATS:
            yield from self._mqadmin(enumerate(lines_of(replay), 1))
        else:  # C-level block scan, the same records as the line reader
            yield from self._log(log_records_blocks(replay, 1, counts), counts)

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

    def _log(self, records: Iterator[Record], counts: LogCounts) -> Iterator[Event]:
        count = 0
        error = ""
        try:
            for no, ts, text in records:
                event = parse_message(text, ts)
                if event is not None:
                    count += 1
                    yield event.at(self.display, no)
        except (OSError, EOFError, zlib.error) as exc:
            error = f"read stopped at line {counts.lines}: {exc}"
        self.stats = FileStats(
            self.display,
            self.stats.format,
            self.stats.compressed,
            counts.lines,
            counts.records,
            counts.continuation,
            counts.garbled,
            count,
            error,
        )


@dataclass
class LogCounts:
    """How the lines of a log were taken so far (updated while `log_records` runs)."""

    lines: int = 0  # number of the last line read
    records: int = 0
    continuation: int = 0
    garbled: int = 0


Record = tuple[int, "float | None", str]  # (header line number, timestamp, message with continuations)


class _Assembler:
    """The record state machine both readers share: lines in, records that can matter out."""

    def __init__(self, counts: LogCounts) -> None:
        self.c = counts
        self.open_record = False
        self.pending: list[str] | None = None  # parts of an interesting record being assembled
        self.at = 0
        self.ts: float | None = None
        self.chars = 0

    def flush(self) -> Record | None:
        if self.pending is None:
            return None
        record = (self.at, self.ts, "".join(self.pending))
        self.pending = None
        return record

    def boring(self, n: int) -> Record | None:
        """`n` record headers that cannot matter (the common case): they close the open record."""
        record = self.flush()
        self.c.records += n
        self.open_record = True
        return record

    def line(self, no: int, raw: str) -> Record | None:
        """One line; returns the record it closes, if any."""
        line = raw.rstrip("\r\n")
        # fast path: a record header that cannot matter needs no parsing at all
        if looks_like_header(line) and INTERESTING.search(line) is None and _PULL_EXCEPTION not in line:
            return self.boring(1)
        header = split_header(line)
        if header is None:
            if not self.open_record or "\x00" in line:
                self.c.garbled += 1 if line.strip() else 0
            else:
                self.c.continuation += 1
                if self.pending is not None and len(self.pending) < MAX_RECORD_LINES and self.chars < MAX_RECORD_CHARS:
                    self.pending.append(line)
                    self.chars += len(line)
            return None
        record = self.boring(1)
        ts, msg = header
        if msg and (INTERESTING.search(msg) is not None or msg.startswith(_PULL_EXCEPTION)):
            self.pending, self.at, self.ts, self.chars = [msg], no, ts, len(msg)
        return record


def log_records(lines: Iterable[tuple[int, str]], counts: LogCounts | None = None) -> Iterator[Record]:
    """The records of a log that can matter, in order: (header line number, timestamp, message with
    its continuation lines joined). `lines` are (line number, text) in file order; a record is a
    header line plus the headerless lines after it (stack traces, wrapped text). Pure: the reader
    and the Spark audit both assemble records with it."""
    c = counts if counts is not None else LogCounts()
    asm = _Assembler(c)
    for no, raw in lines:
        c.lines = no
        record = asm.line(no, raw)
        if record is not None:
            yield record
    record = asm.flush()
    if record is not None:
        yield record


# Block mode (the CLI on a whole file): only the lines that may not be boring headers are looked at
# in Python, found by C-level searches; every other line is counted. Same records as `log_records`.
BLOCK_CHARS = 1 << 18
# a line that surely passes `looks_like_header` (a subset of it: ASCII digits, 21+ chars before CR/LF)
_NOT_HEADER_LIKE = re.compile(r"\n(?!(?=[^\r\n]{21})[0-9](?:[^\r\n]{3}-[^\r\n]{8}:|[^\r\n]:[^\r\n]{2}:))")
# every line INTERESTING or _PULL_EXCEPTION can match holds one of these (case-sensitive, as they
# are): "subscription" stands for its three, "consumer" for four, "ebalance" for two
ANCHORS = (
    "subscription",
    "consumer",
    "group info not exist",
    "offset too small",
    "PULL_OFFSET_MOVED",
    "no queue data",
    "expired channel",
    "ebalance",
    "CODE: 25",
    "code:25",
    _PULL_EXCEPTION,
)


def _special_starts(block: str) -> list[int]:
    """Offsets (in `block`, which starts at a line start) of the lines that are not surely boring."""
    starts = {
        m.start() for m in _NOT_HEADER_LIKE.finditer("\n" + block)
    }  # index in the prefixed text = line start in block
    for anchor in ANCHORS:
        i = block.find(anchor)
        while i != -1:
            start = block.rfind("\n", 0, i) + 1
            starts.add(start)
            end = block.find("\n", i)
            i = block.find(anchor, end) if end != -1 else -1
    starts.discard(len(block))  # the empty rest after a final newline is not a line
    return sorted(starts)


def log_records_blocks(blocks: Iterable[str], first_line: int, counts: LogCounts) -> Iterator[Record]:
    """`log_records` over text blocks, each a run of whole lines (the last may lack its newline),
    the first numbered `first_line`; `counts.lines` is the number of the last whole line read."""
    asm = _Assembler(counts)
    no = first_line - 1  # number of the last line handled
    for block in blocks:
        pos = 0
        for start in _special_starts(block):
            skipped = block.count("\n", pos, start)
            if skipped:
                record = asm.boring(skipped)
                if record is not None:
                    yield record
                no += skipped
            end = block.find("\n", start)
            end = len(block) if end == -1 else end + 1
            no += 1
            record = asm.line(no, block[start:end])
            if record is not None:
                yield record
            pos = end
        rest = block.count("\n", pos) + (1 if pos < len(block) and not block.endswith("\n") else 0)
        if rest:
            record = asm.boring(rest)
            if record is not None:
                yield record
            no += rest
        counts.lines = no
    record = asm.flush()
    if record is not None:
        yield record


def lines_of(blocks: Iterable[str]) -> Iterator[str]:
    """The lines of blocks of whole lines (`line_blocks`), newlines kept."""
    return chain.from_iterable(io.StringIO(block) for block in blocks)


def _with_head(blocks: Iterator[str]) -> tuple[Iterator[str], list[str]]:
    """A file's first HEAD_LINES lines (for format detection), and its blocks again from the start."""
    seen: list[str] = []
    head: list[str] = []
    for block in blocks:
        seen.append(block)
        head += islice(io.StringIO(block), HEAD_LINES - len(head))
        if len(head) == HEAD_LINES:
            break
    return chain(seen, blocks), head


def line_blocks(
    stream: io.TextIOBase | IO[str], size: int = BLOCK_CHARS, max_line: int = MAX_LINE_CHARS
) -> Iterator[str]:
    """The rest of a text stream as blocks of whole lines (the file's last line may lack a newline).
    A line longer than `max_line` keeps only its first `max_line` characters (memory stays bounded)."""
    carry = ""
    dropping = False  # inside the tail of an over-long line
    while True:
        chunk = stream.read(size)
        if not chunk:
            break
        cut = chunk.rfind("\n")
        if cut == -1:
            if not dropping:
                carry += chunk
                if len(carry) > max_line:
                    carry, dropping = carry[:max_line], True
            continue
        if dropping:
            carry += "\n"
            chunk = chunk[chunk.find("\n") + 1 :]
            cut = chunk.rfind("\n")
            dropping = False
        yield carry + chunk[: cut + 1]
        carry = chunk[cut + 1 :]
    if carry:
        yield carry


def looks_like_header(line: str) -> bool:
    """Cheap test for `yyyy-MM-dd HH:mm:ss` / `HH:mm:ss.SSS [` starts (split_header decides for real)."""
    return (
        len(line) > 20
        and line[0].isdigit()
        and ((line[4] == "-" and line[13] == ":") or (line[2] == ":" and line[5] == ":"))
    )


def _numbered(head: list[str], rest: Iterator[str]) -> Iterator[tuple[int, str]]:
    return enumerate(chain(head, rest), 1)
