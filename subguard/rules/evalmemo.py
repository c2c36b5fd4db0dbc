"""The policies' last judgements, kept by what they judged (`engine.evaluate`).

A pre-commit run after an edit that changed no record the policies read (a blank line, a comment, a
file without consumers, a function body) would judge every group again to the same findings. Each
cached scan's result carries a digest of those records (`ScanResult.digest`: every extractor's
result, the path set, the scan config and code); with the policies, the whole config and the
engine's code it keys the evaluated findings, stored signed in the user's cache (`evaluated/`, the
newest `KEEP`). A scan without a cache (`--no-cache`) has no digest: it is always judged.

When the records changed, the engine judges the run's groups part by part (`Universe.parts`), and
each part's judgement is kept by a digest of what it judged: the part's consumers as JSON, under the
policies, config and code (`Parts`). An edit of one consumer re-judges its group only.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import cast

try:  # hashlib would load OpenSSL for a digest the interpreter has built in
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

from subguard import __version__
from subguard.core.cache import MemoFile, code_stamp, read_signed, user_cache_dir, write_signed
from subguard.core.config import Config
from subguard.core.model import Consumer, Finding
from subguard.core.recordjson import json_of
from subguard.rules.policy import Policy
from subguard.rules.subjects import Unknown
from subguard.scan.extraction import ScanResult

KEEP = 8
PARTS_KEPT = 4096  # part judgements kept per policies, config and code (the newest)


@functools.lru_cache(maxsize=1)
def _code() -> str:
    pkg = Path(__file__).resolve().parent.parent
    return code_stamp(*(pkg / name for name in ("rules", "core", "rocketmq", "deploy")))


def settings(policies: Sequence[Policy], config: Config) -> bytes:
    """What judges the records: the policies (their pickles differ run to run), the config and the
    code (made once per evaluation: `key` and `Parts` take it)."""
    text = f"{list(policies)!r}\0{config.model_dump_json()}\0{__version__}\0{_code()}"
    return text.encode("utf-8", "surrogateescape")


def key(results: Sequence[ScanResult], judged_by: bytes, beyond: bool) -> str | None:
    """The memo key of one evaluation under `settings` (`judged_by`); None when a result has no
    digest (nothing to reuse)."""
    if not results or any(not r.digest for r in results):
        return None
    h = blake2b(digest_size=20)
    for r in results:
        h.update(f"{r.digest}\0{r.root}\0{r.repo}\0".encode("utf-8", "surrogateescape"))
    h.update(judged_by)
    h.update(f"\0{beyond}".encode())
    return h.hexdigest()


def _folder() -> Path:
    return user_cache_dir() / "evaluated"


def load(memo_key: str) -> list[Finding] | None:
    """The findings stored under `memo_key`, or None."""
    value = read_signed(_folder() / f"{memo_key}.pickle")
    if not isinstance(value, list) or not all(isinstance(f, Finding) for f in value):
        return None
    return value


def store(memo_key: str, findings: Sequence[Finding]) -> None:
    """Keep `findings` under `memo_key` (the oldest entries beyond `KEEP` are removed); never fails."""
    folder = _folder()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_signed(folder / f"{memo_key}.pickle", list(findings))
        entries = sorted(os.scandir(folder), key=lambda e: e.stat().st_mtime_ns, reverse=True)
        for old in entries[KEEP:]:
            os.unlink(old.path)
    except Exception:  # noqa: BLE001 - a memo is an optimisation: never a reason to fail
        return


Judgement = tuple[tuple[Finding, ...], tuple[tuple[Unknown, str], ...]]  # findings, (unknown value, rule needing it)


class Parts:
    """The part judgements of one set of policies, config and code (`settings`: `judged_by`):
    judgement by part digest."""

    def __init__(self, judged_by: bytes) -> None:
        self._memo = MemoFile(f"evaluated-parts-{blake2b(judged_by, digest_size=16).hexdigest()}", PARTS_KEPT)
        self._used: list[str] = []

    @staticmethod
    def digest(consumers: Sequence[Consumer]) -> str | None:
        """What a part's judgement rests on besides the settings: its consumers (as scanned), in
        order; None when one does not serialise (nothing kept)."""
        h = blake2b(digest_size=20)
        try:
            for c in consumers:
                h.update(json_of(c))
                h.update(b"\0")
        except Exception:  # noqa: BLE001 - a memo is an optimisation: an odd value is judged, not kept
            return None
        return h.hexdigest()

    def get(self, digest: str) -> Judgement | None:
        value = self._memo.get(digest)
        if not (isinstance(value, tuple) and len(value) == 2):
            return None
        self._used.append(digest)
        return cast(Judgement, value)

    def put(self, digest: str, judged: Judgement) -> None:
        self._memo.put(digest, judged)
        self._used.append(digest)

    def save(self) -> None:
        """Write the memo when a part was judged anew, this run's parts as the newest; never fails."""
        if self._memo.dirty:
            for digest in dict.fromkeys(self._used):  # put again: the newest (`MemoFile.put`)
                self._memo.put(digest, self._memo.get(digest))
            self._memo.save()
