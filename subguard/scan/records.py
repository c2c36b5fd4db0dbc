"""Fast makers of the file records a scan builds for most files of a large tree: each sets the
instance's state in one step, and is used only when it gives exactly what pydantic's documented way
gives (checked once, on samples, when this module is imported)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeVar

from subguard.core.model import FileRecord, FileStatus, Location, Record

Made = TypeVar("Made", bound=Callable[..., FileRecord])
Rec = TypeVar("Rec", bound=Record)


def _skipped_maker() -> Callable[[str, str, str, str, int], FileRecord]:
    """A skipped file's record, `FileRecord.model_construct(path=, status=SKIPPED, reason=,
    extractor=, repo=, size=)` for most files of a large tree at a third of its cost: the instance's
    state set in one step. Used only when it gives exactly what `model_construct` gives (checked once
    on a sample), else `model_construct` itself."""
    given = ("path", "status", "reason", "extractor", "repo", "size")  # every field (else the check below fails)
    new, set_attr, skipped = object.__new__, object.__setattr__, FileStatus.SKIPPED

    def make(path: str, reason: str, extractor: str, repo: str, size: int) -> FileRecord:
        rec = new(FileRecord)
        state = {"path": path, "status": skipped, "reason": reason, "extractor": extractor, "repo": repo, "size": size}
        set_attr(rec, "__dict__", state)
        set_attr(rec, "__pydantic_fields_set__", set(given))
        set_attr(rec, "__pydantic_extra__", None)
        set_attr(rec, "__pydantic_private__", None)
        return rec

    def documented(path: str, reason: str, extractor: str, repo: str, size: int) -> FileRecord:
        return FileRecord.model_construct(
            path=path, status=skipped, reason=reason, extractor=extractor, repo=repo, size=size
        )

    return agreeing(make, documented, [("a", "r", "e", "x", 1)])


def agreeing(fast: Made, documented: Made, samples: Sequence[tuple[Any, ...]]) -> Made:
    """`fast` when it makes exactly the record `documented` makes (the same state) from each of the
    `samples` (arguments), else `documented` (another pydantic: the slow, documented way)."""
    try:
        same = all(fast(*args).__getstate__() == documented(*args).__getstate__() for args in samples)
    except Exception:  # noqa: BLE001 - a pydantic whose internals differ: the documented way
        same = False
    return fast if same else documented


skipped = _skipped_maker()


def _copied(rec: Rec, update: dict[str, object]) -> Rec:
    """`rec.model_copy(update=update)` with the copied state set in one step (no extra or private
    state: the caller checks)."""
    out = object.__new__(type(rec))
    state = rec.__dict__.copy()
    state.update(update)
    object.__setattr__(out, "__dict__", state)
    object.__setattr__(out, "__pydantic_fields_set__", rec.__pydantic_fields_set__ | update.keys())
    object.__setattr__(out, "__pydantic_extra__", None)
    object.__setattr__(out, "__pydantic_private__", None)
    return out


def _copy_agrees() -> bool:
    """Whether `_copied` gives exactly what `model_copy` gives, on samples (another pydantic may not)."""
    file = FileRecord(path="a", status=FileStatus.PARSED, extractor="e")
    samples: list[tuple[Record, dict[str, object]]] = [
        (file, {"repo": "x"}),
        (file, {"repo": "x", "extractor": "f", "size": 3}),
        (Location(path="a", line=2), {"repo": "r"}),
    ]
    try:
        return all(_copied(r, u).__getstate__() == r.model_copy(update=u).__getstate__() for r, u in samples)
    except Exception:  # noqa: BLE001 - a pydantic whose internals differ: the documented way
        return False


_COPY_AGREES = _copy_agrees()


def updated(rec: Rec, update: dict[str, object]) -> Rec:
    """`rec.model_copy(update=update)` at about half its cost, for the records a run copies by the
    thousand (every file record of a scan, every consumer's locations placed in its repo); the
    documented way when the fast one does not agree with it, or the record has extra or private state."""
    if (
        not _COPY_AGREES
        or rec.__pydantic_extra__ is not None
        or rec.__pydantic_private__ is not None
        or type(rec).model_config.get("extra") == "allow"
    ):
        return rec.model_copy(update=update)
    return _copied(rec, update)


# FileRecord's fields that hold text from the scanned tree; when its others hold none (a status, a
# size), a record set without a lone surrogate in those is one `scrub` leaves as it is
_TEXT_FIELDS = tuple(name for name, info in FileRecord.model_fields.items() if info.annotation is str)
PLAIN = all(info.annotation in (str, int, FileStatus) for info in FileRecord.model_fields.values())


def plain_text(records: Collection[FileRecord]) -> bool:
    """Whether each text field of `records`, joined over them all, encodes as UTF-8 (a lone surrogate
    does not): one C pass per field, where looking at each value costs five times as much and
    pickling 20,000 records to search the bytes, as `scrub` does, ten. False for a value that is no
    text."""
    try:
        for name in _TEXT_FIELDS:
            "\0".join(map(operator.attrgetter(name), records)).encode("utf-8")
    except (UnicodeEncodeError, TypeError):
        return False
    return True
