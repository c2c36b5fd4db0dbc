"""Fixes -> new file texts, checked, then written; or a unified diff.

Never a partial write: every fix of a run is applied to the text as it was read, each edited file is
parsed again (and every edited value must read back as intended), and a fix whose file fails is
dropped with everything it touches. Files are written only when none of them changed since they were
read, each through a temporary file renamed over it (atomic per file, mode kept)."""

from __future__ import annotations

import difflib
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from subguard.fix.locate import BY_NAME
from subguard.fix.model import Edit, Fix
from subguard.fix.source import Files, Source


@dataclass
class Outcome:
    """What a run's fixes do: the new text of each file, and the fixes left out and why."""

    applied: list[Fix] = field(default_factory=list)
    skipped: list[tuple[Fix, str]] = field(default_factory=list)
    texts: dict[Path, tuple[Source, str]] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return any(src.text != new for src, new in self.texts.values())


def _overlaps(a: Edit, b: Edit) -> bool:
    if (a.start, a.end, a.new) == (b.start, b.end, b.new):
        return False
    return a.start < b.end and b.start < a.end or (a.start == b.start and a.end == b.end)


def splice(text: str, edits: Sequence[Edit]) -> tuple[str, list[tuple[Edit, int, int]]]:
    """`text` with the (non-overlapping) edits made, and where each edit's new text now lies."""
    out: list[str] = []
    placed: list[tuple[Edit, int, int]] = []
    pos = 0
    size = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        out.append(text[pos : e.start])
        size += e.start - pos
        placed.append((e, size, size + len(e.new)))
        out.append(e.new)
        size += len(e.new)
        pos = e.end
    out.append(text[pos:])
    return "".join(out), placed


def _verify(src: Source, edits: Sequence[Edit]) -> tuple[str, str | None]:
    new, placed = splice(src.text, edits)
    mod = BY_NAME[edits[0].lang]
    problem: str | None = mod.check(new, src.text)
    for e, s, t in placed:
        if problem is None and e.value is not None and mod.decode(e.style, new[s:t]) != e.value:
            problem = f"the edited value at {e.path} does not read back as {e.value!r}"
    return new, problem


def compute(fixes: Sequence[Fix], files: Files) -> Outcome:
    """Apply `fixes` in order to the texts as read; a fix that overlaps an earlier one differently
    is left for the next run, a fix whose file does not re-parse is dropped."""
    out = Outcome()
    chosen: list[Fix] = []
    for fix in fixes:
        taken = [e for f in chosen for e in f.edits]
        if any(_overlaps(e, t) for e in fix.edits for t in taken if e.file == t.file):
            out.skipped.append((fix, "it overlaps another fix (run --fix again)"))
        elif any(files.get(e.file) is None for e in fix.edits):
            out.skipped.append((fix, "a file it edits cannot be read"))
        else:
            chosen.append(fix)
    while True:
        by_file: dict[Path, dict[tuple[int, int, str], Edit]] = {}
        for fix in chosen:
            for e in fix.edits:
                by_file.setdefault(e.file, {})[(e.start, e.end, e.new)] = e
        bad: dict[Path, str] = {}
        texts: dict[Path, tuple[Source, str]] = {}
        for path, edits in by_file.items():
            src = files.get(path)
            assert src is not None
            new, problem = _verify(src, list(edits.values()))
            if problem:
                bad[path] = problem
            texts[path] = (src, new)
        if not bad:
            out.applied, out.texts = chosen, texts
            return out
        keep = []
        for fix in chosen:
            hit = next((bad[p] for p in sorted(fix.files) if p in bad), None)
            if hit:
                out.skipped.append((fix, hit))
            else:
                keep.append(fix)
        chosen = keep


def write(outcome: Outcome) -> list[str]:
    """Write every changed file, or none: returns the files that changed on disk since they were read
    (then nothing is written)."""
    changed = [src for src, new in outcome.texts.values() if src.text != new]
    moved = []
    for src in changed:
        try:
            if src.path.read_bytes() != src.data:
                moved.append(str(src.path))
        except OSError:
            moved.append(str(src.path))
    if moved:
        return moved
    for src in changed:
        new = outcome.texts[src.path][1]
        _atomic_write(src.path, new.encode(src.encoding, "surrogateescape" if src.encoding == "utf-8" else "strict"))
    return []


def _atomic_write(path: Path, data: bytes) -> None:
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".subguard-fix", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _lines(text: str) -> list[str]:
    """Lines as git counts them: split after each \\n only."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def unified_diff(outcome: Outcome, workdir: Path) -> str:
    """A `git apply`-able diff of every changed file, paths relative to `workdir` (a/ and b/ prefixes)."""
    parts: list[str] = []
    for path in sorted(outcome.texts):
        src, new = outcome.texts[path]
        if src.text == new:
            continue
        try:
            rel = os.path.relpath(path, workdir).replace(os.sep, "/")
        except ValueError:
            rel = path.as_posix()
        lines = difflib.unified_diff(_lines(src.text), _lines(new), f"a/{rel}", f"b/{rel}", n=3)
        for line in lines:
            if line.endswith("\n"):
                parts.append(line)
            else:
                parts.append(line + "\n\\ No newline at end of file\n")
    return "".join(parts)
