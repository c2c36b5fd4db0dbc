"""Cache files a resident server keeps loaded (`subguard.core.kept`, `subguard.cli.resident.warm`):
a run gets the server's object only while every file is as it was when loaded and signed with the
same key, once; what a run loaded reaches the server whole through its pipe."""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from subguard.cli.resident import warm
from subguard.core import cache, kept, signing


@pytest.fixture(autouse=True)
def _clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    kept.forget()
    yield
    kept.forget()


def _home() -> str:
    return signing.cache_home()


def _warm() -> int:
    return kept.warm(kept.used(), signing.stored_key)


def _content_cache(tmp_path: Path) -> cache.ContentCache:
    return cache.ContentCache(tmp_path / "cc", "ns", lambda _m: None)


def _filled(tmp_path: Path) -> cache.ContentCache:
    """A content cache with a snapshot and one appended frame on disk."""
    first = _content_cache(tmp_path)
    first.record_needle("a.py", 1, 10, True)
    first.put("claims", "a.py", "python")
    first.save()  # the snapshot
    second = _content_cache(tmp_path)
    second.record_needle("b.py", 2, 20, False)
    second.save()  # a frame appended to the log
    assert second.log_file.exists()
    return second


def test_a_signed_memo_comes_from_the_server_while_unchanged_and_once(tmp_path: Path) -> None:
    path = tmp_path / "memo.pickle"
    cache.write_signed(path, {"k": [1, 2]})
    assert cache.read_signed(path) == {"k": [1, 2]}  # from disk, noted
    assert kept.used() == [(cache.SIGNED, str(path), _home())]
    assert _warm() == 1
    assert kept.kept() == [[cache.SIGNED, str(path)]]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cache, "_load_signed", lambda *_: pytest.fail("read from disk"))
        assert cache.read_signed(path) == {"k": [1, 2]}  # the kept object: the disk is not read
    assert kept.kept() == []  # taken once: a second read goes to the disk
    assert cache.read_signed(path) == {"k": [1, 2]}


def test_a_replaced_file_is_read_from_disk(tmp_path: Path) -> None:
    path = tmp_path / "memo.pickle"
    cache.write_signed(path, "old")
    cache.read_signed(path)
    _warm()
    cache.write_signed(path, "new")  # renamed over it, as every writer of subguard does
    assert cache.read_signed(path) == "new"


def test_an_entry_signed_with_another_key_is_not_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "memo.pickle"
    cache.write_signed(path, "mine")
    cache.read_signed(path)
    _warm()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "other"))  # another key folder: another key
    assert cache.read_signed(path) is None  # not signed with this key: never unpickled, kept or not


def test_a_file_that_is_not_signed_is_never_kept(tmp_path: Path) -> None:
    path = tmp_path / "planted.pickle"
    path.write_bytes(pickle.dumps("planted"))
    assert cache.read_signed(path) is None
    assert _warm() == 0
    assert kept.kept() == []


def test_the_content_cache_state_is_kept_with_its_log(tmp_path: Path) -> None:
    _filled(tmp_path)
    on_disk = _content_cache(tmp_path)
    assert on_disk.stats == {"a.py": (1, 10, True), "b.py": (2, 20, False)}
    assert _warm() == 1

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cache, "load_state", lambda *_: pytest.fail("read from disk"))
        served = _content_cache(tmp_path)
        assert served.stats == on_disk.stats
        assert served.section("claims") == {"a.py": "python"}
    served.record_needle("c.py", 3, 30, True)  # the run's own copy (a fork's, in the server)
    served.save()  # appended: the log is a file of the state, so the kept entry is stale now
    _warm()
    again = _content_cache(tmp_path)
    assert again.stats["c.py"] == (3, 30, True)


def test_an_appended_log_makes_the_kept_state_stale(tmp_path: Path) -> None:
    _filled(tmp_path)
    other = _content_cache(tmp_path)  # another run, still going
    other.record_needle("d.py", 4, 40, False)  # loads the state from disk (noted)
    assert _warm() == 1  # the server keeps the state as it is now
    other.save()  # then that run appends its frame
    assert _content_cache(tmp_path).stats["d.py"] == (4, 40, False)


def test_a_run_tells_its_server_through_the_pipe(tmp_path: Path) -> None:
    path = tmp_path / "memo.pickle"
    cache.write_signed(path, 42)
    cache.read_signed(path)
    told, tell = os.pipe()
    warm.tell(tell)  # as a served run does once it has ended
    kept.forget()
    received = warm.Told(told)
    received.read()
    assert not received.open
    assert kept.kept() == [[cache.SIGNED, str(path)]]


def test_a_torn_or_foreign_message_keeps_nothing(tmp_path: Path) -> None:
    for payload in (b"\x00\x00\x00\x10[[", b"\x00\x00\x00\x02{}", b"\xff\xff\xff\xff" + b"x" * 10):
        told, tell = os.pipe()
        os.write(tell, payload)
        os.close(tell)
        received = warm.Told(told)
        received.read()
        assert not received.open
        assert kept.kept() == []


def test_a_message_still_on_its_way_is_read_when_it_is_whole(tmp_path: Path) -> None:
    path = tmp_path / "memo.pickle"
    cache.write_signed(path, 1)
    cache.read_signed(path)
    body = warm.json.dumps(kept.used()).encode()
    kept.forget()
    told, tell = os.pipe()
    message = len(body).to_bytes(4, "big") + body
    os.write(tell, message[:7])
    received = warm.Told(told)
    received.read()
    assert received.open and kept.kept() == []
    os.write(tell, message[7:])
    received.read()
    assert not received.open
    assert kept.kept() == [[cache.SIGNED, str(path)]]
    os.close(tell)


def test_the_server_unpickles_the_parses_ahead_and_each_is_given_once(tmp_path: Path) -> None:
    writer = _content_cache(tmp_path)
    assert writer.memo("python", "a.py", b"data", lambda: {"facts": [1]}) == {"facts": [1]}
    writer.save()
    _content_cache(tmp_path).stats  # noqa: B018 - loads the state from disk (noted)
    _warm()
    served = _content_cache(tmp_path)
    served.stats  # noqa: B018 - the kept state
    ahead = [value for _blob, value in served._unpickled.values()]
    assert ahead == [{"facts": [1]}]
    first = served.memo("python", "a.py", b"data", lambda: pytest.fail("parsed again"))
    assert first is ahead[0]  # unpickled by the server
    first["facts"].append(2)  # a caller may change what it got: the next one gets its own
    assert served.memo("python", "a.py", b"data", lambda: pytest.fail("parsed again")) == {"facts": [1]}


def test_a_run_that_told_nothing_leaves_no_pipe_open(tmp_path: Path) -> None:
    """A run that ended without its message (killed) while a process it started still holds the
    pipe open: the server closes its end once it has reaped the run."""
    from subguard.cli.resident.server import Server

    folder = Path(tempfile.mkdtemp(prefix="sg-kept-"))  # a socket path holds at most 107 bytes
    server = Server(str(folder / "s.sock"), 60, lambda _m: None)
    told, tell = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the run: starts a helper that keeps the pipe, then ends untold
        if os.fork() == 0:
            time.sleep(3)
        os._exit(0)
    os.close(tell)
    server.children[pid] = received = warm.Told(told)
    try:
        deadline = time.monotonic() + 10
        while pid in server.children and time.monotonic() < deadline:
            server._reap()
            time.sleep(0.01)
        assert pid not in server.children
        assert not received.open
        assert kept.kept() == []
    finally:
        server.close()
        shutil.rmtree(folder)


def test_a_kept_state_warns_as_the_disk_would(tmp_path: Path) -> None:
    _filled(tmp_path)
    log = tmp_path / "cc" / "scan-ns.log"
    frame = signing.seal(b"another key", pickle.dumps({"generation": "x"}))
    with log.open("ab") as fh:  # a frame of another user's key: warned about, ignored
        fh.write(cache._FRAME.pack(len(frame)) + frame)
    from_disk: list[str] = []
    cache.ContentCache(tmp_path / "cc", "ns", from_disk.append).stats  # noqa: B018
    assert len(from_disk) == 1 and "cache log frame ignored" in from_disk[0]
    _warm()
    served: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cache, "load_state", lambda *_: pytest.fail("read from disk"))
        cache.ContentCache(tmp_path / "cc", "ns", served.append).stats  # noqa: B018
    assert served == from_disk


def test_only_so_many_pickles_are_unpickled_ahead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = _content_cache(tmp_path)
    for n in range(5):
        writer.memo("python", f"m{n}.py", bytes([n]), lambda n=n: "x" * 1000 + str(n))
    writer.save()
    _content_cache(tmp_path).stats  # noqa: B018
    monkeypatch.setattr(cache, "AHEAD_BYTES", 2500)  # room for two of the five pickles
    _warm()
    served = _content_cache(tmp_path)
    served.stats  # noqa: B018
    assert len(served._unpickled) == 2
    assert [served.memo("python", f"m{n}.py", bytes([n]), lambda: "parsed") for n in range(5)] == [
        "x" * 1000 + str(n) for n in range(5)
    ]
