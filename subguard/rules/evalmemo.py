"""The policies' last judgements, kept by what they judged (`engine.evaluate`).

A pre-commit run after an edit that changed no record the policies read (a blank line, a comment, a
file without consumers, a function body) would judge every group again to the same findings. Each
cached scan's result carries a digest of those records (`ScanResult.digest`: every extractor's
result, the path set, the scan config and code); with the policies, the whole config and the
engine's code it keys the evaluated findings, stored signed in the user's cache (`evaluated/`, the
newest `KEEP`). A scan without a cache (`--no-cache`) has no digest: it is always judged.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path

try:  # hashlib would load OpenSSL for a digest the interpreter has built in
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

from subguard import __version__
from subguard.core.cache import code_stamp, read_signed, user_cache_dir, write_signed
from subguard.core.config import Config
from subguard.core.model import Finding
from subguard.rules.policy import Policy
from subguard.scan.extraction import ScanResult

KEEP = 8


@functools.lru_cache(maxsize=1)
def _code() -> str:
    pkg = Path(__file__).resolve().parent.parent
    return code_stamp(*(pkg / name for name in ("rules", "core", "rocketmq", "deploy")))


def key(results: Sequence[ScanResult], policies: Sequence[Policy], config: Config, beyond: bool) -> str | None:
    """The memo key of one evaluation; None when a result has no digest (nothing to reuse)."""
    if not results or any(not r.digest for r in results):
        return None
    h = blake2b(digest_size=20)
    for r in results:
        h.update(f"{r.digest}\0{r.root}\0{r.repo}\0".encode("utf-8", "surrogateescape"))
    h.update(repr(list(policies)).encode("utf-8", "surrogateescape"))  # their pickles differ run to run
    h.update(config.model_dump_json().encode("utf-8", "surrogateescape"))
    h.update(f"\0{__version__}\0{_code()}\0{beyond}".encode("utf-8", "surrogateescape"))
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
