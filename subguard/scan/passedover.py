"""The files a scan's prefilter passed over, kept by a resident server for the next run it forks.

Most files of a large tree are passed over before any extractor runs: no extractor takes them
(`NO_EXTRACTOR`), or none of their extractor's needles is in them (`NO_REFERENCE`). A run claims,
looks up and makes a record for each (20,000 at the monorepo's size: a fifth of an edited, served
run). A run a server forked writes those it passed over once it has answered (`afterwards`), signed,
beside its content cache; the server loads the file and makes the records once (`kept`), and the
next run it forks takes the record of each file that is the same candidate (path, size, mtime)
instead. The file belongs to one content cache (its name holds the version, the scan config, the
code and the root) and names the extractors and the repository it was made for. Outside a server it
is neither written nor read: a plain run would pay to read it what it saves.
"""

from __future__ import annotations

import contextlib
import marshal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from subguard.core import afterwards, kept, signing
from subguard.core.model import FileRecord
from subguard.scan import discover, watch
from subguard.scan.discover import Candidate
from subguard.scan.records import plain_text, skipped

KIND = "passed-over"
FORMAT = 1

# one file passed over: path, absolute path, size, mtime (ns), reason, extractor
Entry = tuple[str, str, int, int, str, str]


@dataclass(frozen=True)
class Pass:
    """A held memo's pass over one tuple of candidates, made by the server ahead of the run: the
    records of the candidates it holds (by path) and those candidates, and the others, in order."""

    candidates: tuple[Candidate, ...]
    records: Mapping[str, FileRecord]
    hits: tuple[Candidate, ...]
    others: tuple[Candidate, ...]
    plain: bool  # no record holds a lone surrogate (`records.plain_text`)


@dataclass(frozen=True)
class Memo:
    """What a server keeps of one file: its records by candidate, the folder its files are in, and
    its pass over the candidates the server made ahead for that folder (`prepare`), if any."""

    names: tuple[str, ...]
    repo: str
    records: Mapping[Candidate, FileRecord]
    top: str = ""
    passes: list[Pass] = field(default_factory=list, compare=False)

    def pass_over(self, candidates: Sequence[Candidate]) -> Pass | None:
        """The pass made ahead over these very `candidates`, or None."""
        return next((p for p in self.passes if p.candidates is candidates), None)


def path_of(cache_file: str) -> str:
    """The memo's file beside a content cache's snapshot (`scan-NS.pickle`)."""
    return cache_file.removesuffix(".pickle") + ".passed"


def cache_file_of(path: str) -> str:
    """The content cache's snapshot beside the memo's file `path` (`path_of`'s inverse)."""
    return path.removesuffix(".passed") + ".pickle"


def roots() -> list[tuple[str, str]]:
    """In the server: (content cache snapshot, scan root folder) of each memo it keeps."""
    return [(cache_file_of(path), memo.top) for path, memo in kept.items(KIND) if isinstance(memo, Memo) and memo.top]


def take(cache_file: str, key: bytes, names: Sequence[str], repo: str) -> Memo | None:
    """The memo the server holds for the scan of `cache_file` by the extractors `names` as `repo`;
    None outside a server, or when it holds none for them. Noted either way (`kept.take`): the server
    loads the file again once the run has ended."""
    if not kept.serving():
        return None
    memo = kept.take(KIND, path_of(cache_file), key, signing.cache_home())
    if not isinstance(memo, Memo) or memo.names != tuple(names) or memo.repo != repo:
        return None
    return memo


def prepare() -> None:
    """In the server: each held memo's pass over the candidates made ahead for its folder
    (`discover.made_indexes`), unless made already. A run it forks then takes the held records of 20,000
    candidates in one C-level update and looks at the others only."""
    made = discover.made_indexes()
    for memo in kept.values(KIND):
        if not isinstance(memo, Memo) or not memo.top:
            continue
        index = made.get(memo.top)
        candidates = index.candidates if index is not None else None
        if not isinstance(candidates, tuple) or memo.pass_over(candidates) is not None:
            continue
        held = memo.records.get
        records: dict[str, FileRecord] = {}
        hits: list[Candidate] = []
        others: list[Candidate] = []
        for cand in candidates:
            rec = held(cand)
            if rec is None:
                others.append(cand)
            else:
                records[cand.path] = rec
                hits.append(cand)
        memo.passes[:] = [Pass(candidates, records, tuple(hits), tuple(others), plain_text(records.values()))]


def write_later(
    cache_file: str,
    names: Sequence[str],
    repo: str,
    held: Mapping[Candidate, FileRecord],
    hits: Sequence[Candidate],
    new: Sequence[tuple[Candidate, str, str]],
) -> None:
    """In a served run: write what its prefilter passed over for the next, once it has answered: the
    `hits` among the `held` records, and the `new` ones (candidate, reason, extractor). Not when
    there is no new one and each held record was used: the server holds them still."""
    if not kept.serving() or (not new and len(hits) == len(held)):
        return

    def write() -> None:
        entries: list[Entry] = [
            (c.path, c.abspath, c.size, c.mtime_ns, held[c].reason, held[c].extractor) for c in hits
        ]
        entries += [(c.path, c.abspath, c.size, c.mtime_ns, reason, name) for c, reason, name in new]
        with contextlib.suppress(OSError):  # a cache: the next run passes them over itself
            signing.write_sealed(path_of(cache_file), marshal.dumps((FORMAT, tuple(names), repo, entries)))

    afterwards.later(write)


def _load(path: str, key: bytes) -> Memo | None:
    """In the server: the memo at `path` with each record made, or None."""
    body = signing.read_sealed(path, key)
    if body is None:
        return None
    try:
        form, names, repo, entries = marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return None
    if form != FORMAT or not isinstance(repo, str) or not isinstance(entries, list):
        return None
    records = {
        Candidate(path, abspath, size, None, mtime): skipped(path, reason, name, repo, size)
        for path, abspath, size, mtime, reason, name in entries
        if mtime
    }
    first = next(iter(records), None)  # every candidate of one scan has the same folder
    top = (
        first.abspath[: -len(first.path) - 1] if first is not None and first.abspath.endswith(f"/{first.path}") else ""
    )
    return Memo(tuple(names), repo, records, top)


kept.register(KIND, lambda path: (path,), _load)
watch.AFTER.append(prepare)
