"""The files a served run's prefilter passed over, kept by the server for the next run
(`subguard.scan.passedover`): the records a run takes from it are the ones it would make, a file
that changed is looked at again, and nothing is written or taken outside a server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from subguard.core import kept, signing
from subguard.core.config import Config
from subguard.core.model import FileStatus
from subguard.scan import passedover
from subguard.scan.extraction import NO_EXTRACTOR, NO_REFERENCE, ScanResult, open_cache, scan_repo

CONSUMER = b"""from rocketmq.client import PushConsumer

consumer = PushConsumer("orders-group")
consumer.subscribe("orders", lambda m: None, "paid")
consumer.start()
"""


@pytest.fixture(autouse=True)
def _served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("SUBGUARD_CACHE_DIR", raising=False)
    kept.forget()
    kept.serve()
    taken: list[object] = []
    take = kept.take
    monkeypatch.setattr(kept, "take", lambda *a: taken.append(take(*a)) or taken[-1])
    yield taken
    kept.serve(False)
    kept.forget()


def _repo(root: Path) -> None:
    (root / "svc").mkdir(parents=True)
    (root / "svc" / "consumer.py").write_bytes(CONSUMER)
    (root / "svc" / "util.py").write_bytes(b"def helper():\n    return 1\n")
    (root / "README.md").write_bytes(b"# a service\n")
    for n in range(30):
        (root / "svc" / f"mod{n}.py").write_bytes(b"X = %d\n" % n)


def _touch(path: Path, data: bytes) -> None:
    """Write `data` and move the mtime on by a second (no edit hides in a timestamp tick)."""
    st = path.stat()
    path.write_bytes(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def _served_scan(root: Path, config: Config, repo: str | None = None) -> ScanResult:
    """A scan as a served run makes it, then what it loaded kept as the server keeps it."""
    result = scan_repo(root, config, repo=repo, cache_key="k")
    kept.warm(kept.drain(), signing.stored_key)
    return result


def _memos(taken: list[object]) -> list[passedover.Memo]:
    return [t for t in taken if isinstance(t, passedover.Memo)]


def test_a_served_scan_takes_the_records_it_would_make(tmp_path: Path, _served: list[object]) -> None:
    root = tmp_path / "repo"
    _repo(root)
    config = Config()
    first = _served_scan(root, config)
    memo_file = passedover.path_of(str(open_cache(root.resolve(), config, "k").file))
    assert os.path.exists(memo_file)  # written once the scan had answered
    reasons = {r.path: r.reason for r in first.files}
    assert reasons["README.md"] == NO_EXTRACTOR and reasons["svc/util.py"] == NO_REFERENCE

    _touch(root / "svc" / "consumer.py", CONSUMER + b"\n")  # the edit of a consumer: every other file held
    second = _served_scan(root, config)
    memos = _memos(_served)
    assert memos and len(memos[-1].records) == 32  # README, util.py and the 30 modules
    assert second == scan_repo(root, config)  # as a scan without any cache makes it

    # a file passed over turns into a consumer: the held record of its old self is not taken
    _touch(root / "svc" / "util.py", CONSUMER.replace(b"orders-group", b"util-group"))
    third = _served_scan(root, config)
    assert third == scan_repo(root, config)
    util = next(r for r in third.files if r.path == "svc/util.py")
    assert util.status is FileStatus.PARSED
    assert {c.group.value for c in third.consumers} == {"orders-group", "util-group"}

    # and back: passed over again, written for the next run, which takes it
    _touch(root / "svc" / "util.py", b"def helper():\n    return 2\n")
    assert _served_scan(root, config) == scan_repo(root, config)
    fourth = _served_scan(root, config)
    assert fourth == scan_repo(root, config)
    assert any(c.path == "svc/util.py" for c in _memos(_served)[-1].records)


def test_held_records_are_for_one_repository_name(tmp_path: Path, _served: list[object]) -> None:
    root = tmp_path / "repo"
    _repo(root)
    config = Config()
    _served_scan(root, config)
    other = _served_scan(root, config, repo="renamed")
    assert {r.repo for r in other.files} == {"renamed"}
    assert other == scan_repo(root, config, repo="renamed")


def test_nothing_is_written_or_taken_outside_a_server(tmp_path: Path, _served: list[object]) -> None:
    kept.serve(False)
    root = tmp_path / "repo"
    _repo(root)
    config = Config()
    scan_repo(root, config, cache_key="k")
    assert not os.path.exists(passedover.path_of(str(open_cache(root.resolve(), config, "k").file)))
    assert not _memos(_served)
    assert all(kind != passedover.KIND for kind, _, _ in kept.drain())


def test_an_unchanged_memo_is_held_not_loaded_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server holds an entry whose files did not change (the runs it forks have their own copy),
    and loads a file written anew."""
    loads: list[str] = []
    monkeypatch.setitem(kept.LOADERS, "test-kind", ((lambda path: (path,)), lambda path, key: loads.append(path) or 1))
    target = tmp_path / "file"
    target.write_text("one")
    wanted = [("test-kind", str(target), signing.cache_home())]
    signing.user_key()
    assert kept.warm(wanted, signing.stored_key) == 1
    assert kept.warm(wanted, signing.stored_key) == 1
    assert loads == [str(target)]
    _touch(target, b"two")
    kept.warm(wanted, signing.stored_key)
    assert loads == [str(target), str(target)]


def test_the_records_a_server_found_clean_are_not_looked_at_again_and_the_others_are() -> None:
    """A served scan checks for lone surrogates (undecodable file names) only in the records that are
    not the server's pass; the server checks those once, when it makes the pass."""
    from subguard.scan import extraction
    from subguard.scan.records import plain_text, skipped

    held = {p: skipped(p, NO_EXTRACTOR, "", "r", 1) for p in ("a.txt", "b.txt")}
    odd = skipped("c\udcff.txt", NO_EXTRACTOR, "", "r", 1)  # a file name that is no UTF-8
    assert plain_text(list(held.values())) and not plain_text([odd])
    files = (*held.values(), odd)
    scrubbed = extraction._scrub_files(files, held)
    assert [r.path for r in scrubbed] == ["a.txt", "b.txt", "c\ufffd.txt"]
    assert extraction._scrub_files(tuple(held.values()), held) == tuple(held.values())
    # a record of the same path that is not the held one (an extractor read the file) is looked at
    again = skipped("a\udcff.txt", NO_EXTRACTOR, "", "r", 1)
    assert (
        extraction._scrub_files((again,), {"a\udcff.txt": skipped("a\udcff.txt", NO_EXTRACTOR, "", "r", 1)})[0].path
        == "a\ufffd.txt"
    )


def test_updated_is_model_copy_for_every_record_kind() -> None:
    """`records.updated` (the one-step copy the scan's file records and the rules' repo placement
    take) gives what `model_copy(update=...)` gives: the same state, fields set and class, for a file
    record, a location and a consumer with nested records."""
    from subguard.core.model import ClientFamily, Consumer, FileRecord, FileStatus, Location, Value
    from subguard.scan import records

    assert records._COPY_AGREES  # this pydantic takes the fast path: the comparisons below test it
    where = Location(path="svc/c.py", line=3)
    consumer = Consumer(
        consumer_id="svc/c.py::c",
        group=Value.literal("GID", where),
        client=ClientFamily.PYTHON_NATIVE_4X,
        location=where,
    )
    cases = [
        (FileRecord(path="a", status=FileStatus.PARSED, extractor="e"), {"repo": "r", "size": 3}),
        (where, {"repo": "r"}),
        (consumer, {"repo": "r", "location": records.updated(where, {"repo": "r"}), "service": "svc"}),
    ]
    for rec, update in cases:
        fast, documented = records.updated(rec, update), rec.model_copy(update=update)
        assert type(fast) is type(documented)
        assert fast.__getstate__() == documented.__getstate__()
        assert fast == documented and fast is not rec
