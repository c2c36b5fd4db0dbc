"""Edits a `check` run would not see, so that the run memo may replay the run after them.

Most commits of a large repository edit ordinary code: files an extractor claims but skipped because
they hold none of its needles (`subguard.extract.NEEDLES`: a Python file that never names
`rocketmq`). Such a file reaches no extractor, so the run after its edit prints what the run before
printed. A recorded run keeps, per scan root, its listing entry by entry (`snapshot`) and the files
it skipped that way and did not otherwise use (`subguard.scan.extraction.unread_files`: read by no
extractor, cited by no finding), with the needles and the patterns its extractors searched other
files for. The replay compares the listing now with the recorded one (`changed_entries`): when the
only entries that changed are such files, still regular, within the size limit, and still holding no
needle and matching no searched pattern (`untouched`), the memo stands.

An edit of a consumer file can leave the run as blind, when the file's parse is what it was: a
`touch`, a comment edited in place or added after the last line. Undoing an edit, switching back to
a branch or pre-commit stashing what is not staged brings back bytes a recent run parsed. The record
keeps, for each file an extractor parsed in full and took nothing else from, the digest of its bytes
and of their parse, and those of the same file's last few contents (`with_earlier_prints`); an edit
that gives bytes whose parse the record knows to be the recorded one (`same_parses`) leaves the memo
standing. The parse of bytes no recent run parsed is not known without parsing them: `same_parses`
names those files, and the memo stands once the parses made ahead confirm them
(`subguard.scan.runmemo.confirm`, which then keeps the new bytes as known: `learnt`).

Nothing else is written back: a later run compares against the same recorded listing and reads the
edited files again, so a second edit of one of them is never missed. Standard library only, like
`subguard.scan.runmemo`, which loads this module.
"""

from __future__ import annotations

import marshal
import os
import stat

try:  # hashlib would load OpenSSL (~10 ms) for a digest the interpreter has built in
    from _sha1 import sha1
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import sha1

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

HELD_CONTENTS = 4  # a file's contents whose parse digests a record keeps (`with_earlier_prints`)
MOST_EDITS = 64  # more changed entries than this: run for real (reading them all costs more than it saves)
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def snapshot(kept: Any) -> bytes | None:
    """The recorded form of what `runmemo.root_listing` kept of a root: a walk's rows by folder, or
    git's names and stat fields; None when the walk's rows are not all there (a forked half of the
    walk that was let go without handing them over)."""
    if isinstance(kept, tuple):
        names, stats = kept
        return marshal.dumps(("git", list(names), stats))
    rows = getattr(kept, "complete", None)
    if rows is None:
        return None
    folders = rows()
    return None if kept.partial else marshal.dumps(("walk", folders))


def changed_entries(recorded: bytes, kept: Any) -> list[str] | None:
    """The entries (paths relative to the root) whose stat fields differ between the recorded listing
    and the one `kept` now; None when they differ otherwise (an entry added, removed, turned into
    another kind, a folder that could not be read) or when either listing is not whole."""
    try:
        old = marshal.loads(recorded)
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(old, tuple) or not old:
        return None
    if old[0] == "git" and isinstance(kept, tuple):
        return _changed_names(old[1], old[2], *kept)
    if old[0] == "walk" and not isinstance(kept, tuple) and hasattr(kept, "complete"):
        rows = kept.complete()
        return None if kept.partial else _changed_rows(old[1], rows)
    return None


def _changed_names(
    old_names: Sequence[str], old_stats: dict[str, Any], names: Sequence[str], stats: dict[str, Any]
) -> list[str] | None:
    if list(old_names) != list(names) or old_stats.keys() != stats.keys():
        return None
    return [name for name, st in stats.items() if old_stats[name] != st]


def _changed_rows(old: dict[str, bytes], new: dict[str, bytes]) -> list[str] | None:
    """The changed files of a walk's rows (`treestamp._Walk._rows`): (name, digest) a subfolder,
    (name, mode, size, mtime, ctime, inode) a stamped entry, anything else an entry counted by name."""
    if old.keys() != new.keys():
        return None
    changed: list[str] = []
    for rel, blob in new.items():
        if old[rel] == blob:
            continue
        before = {row[0]: row for row in marshal.loads(old[rel])}
        after = {row[0]: row for row in marshal.loads(blob)}
        if before.keys() != after.keys():
            return None
        prefix = f"{rel}/" if rel else ""
        for name, row in after.items():
            was = before[name]
            if was == row or (len(row) == len(was) == 2 and isinstance(row[1], bytes) and isinstance(was[1], bytes)):
                continue  # the same, or a subfolder whose own rows tell what changed inside it
            if len(row) != 6 or len(was) != 6:
                return None
            changed.append(prefix + name)
    return changed


def untouched(top: str, changed: Sequence[str], recorded: dict[str, Any]) -> bool:
    """Whether each changed path is a file the recorded run skipped for want of needles and did not
    otherwise use, and still is: regular, within the size limit, holding none of its extractor's
    needles and matching none of the patterns the run's extractors searched other files for."""
    paths, needles = recorded.get("paths"), recorded.get("needles")
    patterns, most = recorded.get("patterns"), recorded.get("max_size")
    if not isinstance(paths, dict) or not isinstance(needles, dict) or not isinstance(most, int):
        return False
    wanted_by: list[Any] = [needles.get(paths.get(rel)) for rel in changed]
    if not all(wanted_by):  # a file the run read (an edited consumer): no pattern needs compiling
        return False
    searched: list[Any] = []
    if patterns:
        import re  # only when an extractor searched: most runs of a tree without consumers never do

        try:
            searched = [re.compile(p) for p in patterns]
        except (re.error, TypeError):
            return False
    for rel, wanted in zip(changed, wanted_by, strict=True):
        data = read_regular(f"{top}/{rel}", most)
        if data is None or any(n in data for n in wanted) or any(rx.search(data) for rx in searched):
            return False
    return True


def same_parses(
    top: str, changed: Sequence[str], recorded: dict[str, Any], unknown: list[tuple[str, str, str]] | None = None
) -> bool:
    """Whether each changed path is a file the recorded run parsed in full and took nothing else from
    (`subguard.scan.extraction.parse_prints`), and still is: regular, within the size limit, holding
    one of its extractor's needles and one of those of a full parse and no inline waiver (what the
    extractors search other files for is never searched in a file parsed in full); and whose bytes
    are the ones the run parsed, or bytes the same file held before that parsed to the same
    (`with_earlier_prints`): a parse pickles to the same bytes in every process, so equal digests
    are equal parses, and the run's output follows. With `unknown`, a file whose bytes no recent run
    parsed passes too, and (path, sha1 of its bytes, the digest its parse must have) is added to it:
    the memo stands if the parses ahead confirm them (`subguard.scan.runmemo.confirm`)."""
    tables = [recorded.get(key) for key in ("printed", "prints", "parsed", "needles", "full")]
    most, waiver = recorded.get("max_size"), recorded.get("waiver")
    if not all(isinstance(table, dict) for table in tables) or not isinstance(most, int):
        return False
    printed, prints, parsed, needles, full = (table or {} for table in tables)
    if not isinstance(waiver, bytes) or not waiver:
        return False
    import re

    try:
        marked = re.compile(waiver).search
    except (re.error, TypeError):
        return False
    for rel in changed:
        name, digest, contents = parsed.get(rel), printed.get(rel), prints.get(rel)
        wanted, deep = needles.get(name), full.get(name)
        if not (digest and isinstance(contents, dict) and wanted and deep):
            return False
        then = contents.get(digest)
        data = read_regular(f"{top}/{rel}", most)
        if then is None or data is None or not any(n in data for n in wanted) or not any(n in data for n in deep):
            return False
        if marked(data):
            return False
        now = sha1(data).hexdigest()
        if now == digest:
            continue
        parse = contents.get(now)
        if parse is None and unknown is not None:
            unknown.append((rel, now, then))
        elif parse != then:
            return False
    return True


def with_earlier_prints(now: dict[str, dict[str, str]], earlier: Any) -> dict[str, dict[str, str]]:
    """`now` (path -> {sha1 of its bytes: sha1 of its parse}, this run's) with the digests the record
    before kept for the same paths (`earlier`: its aside row of the same root), newest first, at most
    `HELD_CONTENTS` per path: an edit back to a content a recent run parsed (an undo, a branch switch,
    pre-commit stashing what is not staged) is replayed (`same_parses`)."""
    try:
        old = marshal.loads(earlier[1]).get("prints") if isinstance(earlier, tuple) and len(earlier) == 3 else None
    except (EOFError, ValueError, TypeError, AttributeError):
        old = None
    if not isinstance(old, dict):
        return now
    out: dict[str, dict[str, str]] = {}
    for path, contents in now.items():
        merged = dict(contents)
        before = old.get(path)
        for digest, parse in before.items() if isinstance(before, dict) else ():
            if len(merged) >= HELD_CONTENTS:
                break
            merged.setdefault(digest, parse)
        out[path] = merged
    return out


def learnt(contents: dict[str, str], printed: str, now: str, parse: str) -> dict[str, str]:
    """A file's known contents (`with_earlier_prints`) with bytes `now` whose parse was found to be
    `parse`: after the recorded content, before the earlier ones, at most `HELD_CONTENTS`."""
    merged = {printed: contents[printed], now: parse}
    for digest, other in contents.items():
        if len(merged) >= HELD_CONTENTS:
            break
        merged.setdefault(digest, other)
    return merged


def read_regular(path: str, most: int) -> bytes | None:
    """The bytes of a regular file of at most `most` bytes (a link, a FIFO, a larger file: None),
    read as `subguard.scan.discover.read_limited` reads it."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > most:
            return None
        chunks, total = [], 0
        while total <= most and (chunk := os.read(fd, max(st.st_size + 1 - total, 1 << 16))):
            chunks.append(chunk)
            total += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return None if total > most else b"".join(chunks)
