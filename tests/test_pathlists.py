"""An edit appends a small frame to the content cache (issue 20: "the cache is appended, not
rewritten"): an extractor's kept state names the files it was given and read by a digest of their
list and of their stats (`subguard.scan.pathlists`), and the list itself is stored again only when
the paths change."""

from __future__ import annotations

import dataclasses
import pickle
import struct
from pathlib import Path
from typing import Any

import pytest

from subguard.core import cache, signing
from subguard.scan import pathlists, runmemo
from subguard.scan.extraction import _State
from tests.test_incremental import Editor, _check_here, make_repo

PLAIN_FILES = 400  # Python files without a consumer: the factories' search reads each of them


def _frames(log: Path) -> list[dict[str, Any]]:
    """The deltas appended to a content cache's log, in order."""
    blob, at, out = log.read_bytes(), 0, []
    while at < len(blob):
        (size,) = struct.unpack_from(">Q", blob, at)
        body = signing.unseal(signing.user_key(), blob[at + 8 : at + 8 + size])
        assert body is not None
        out.append(pickle.loads(body))
        at += 8 + size
    return out


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    make_repo(root)
    for n in range(PLAIN_FILES):
        (root / "lib" / f"module_{n:03d}.py").parent.mkdir(parents=True, exist_ok=True)
        (root / "lib" / f"module_{n:03d}.py").write_text(f"VALUE_{n} = {n}\n", encoding="utf-8")
    monkeypatch.chdir(root)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("SUBGUARD_CACHE_DIR", raising=False)
    monkeypatch.setattr(runmemo, "RACY_NS", 0)  # the editor moves each mtime by a second
    return root


def _logs(root: Path) -> list[Path]:
    return sorted((root / ".subguard_cache").glob("scan-*.log"))


def _python_state(root: Path) -> _State:
    (snapshot,) = (root / ".subguard_cache").glob("scan-*.pickle")
    loaded = cache.load_state(snapshot, snapshot.with_suffix(".log"), signing.user_key(), print)
    state = loaded.incremental["extract"]["python"]
    assert isinstance(state, _State)
    return state


def test_an_edit_appends_no_list_of_the_files_read(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    _check_here(repo, out)
    state = _python_state(repo)
    listed = pathlists.listed(_cache_of(repo), state.reads.key)
    assert listed is not None and len(listed) > PLAIN_FILES  # the search read every Python file
    editor = Editor(repo, 0)
    consumer = repo / "svc1" / "consumer_1.py"
    # a new global: the file's parse changes, so the run runs (a comment alone would be replayed)
    editor.write(consumer, consumer.read_text(encoding="utf-8") + "\nEDITED = 1\n")
    _check_here(repo, out)
    (log,) = _logs(repo)
    (frame,) = _frames(log)
    assert "python" in frame["incremental"]["extract"]  # the extractor ran again
    assert pathlists.SECTION not in frame["incremental"]  # over the same files: their list is not stored again
    kept = frame["incremental"]["extract"]["python"]
    assert kept.reads == state.reads and kept.chosen.stats != state.chosen.stats  # the edited file was given
    # what the state holds besides the result is a few hundred bytes, however many files were read
    assert len(pickle.dumps(dataclasses.replace(kept, blob=b""))) < 2048


def _cache_of(root: Path) -> cache.ContentCache:
    (snapshot,) = (root / ".subguard_cache").glob("scan-*.pickle")
    namespace = snapshot.name.removeprefix("scan-").removesuffix(".pickle")
    return cache.ContentCache(root / ".subguard_cache", namespace, print)


def test_a_new_file_stores_a_new_list_and_puts_the_old_away(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    _check_here(repo, out)
    before = _python_state(repo).reads.key
    editor = Editor(repo, 0)
    editor.write(repo / "lib" / "module_new.py", "VALUE = 1\n")
    _check_here(repo, out)
    (frame,) = _frames(_logs(repo)[0])
    after = frame["incremental"]["extract"]["python"].reads.key
    assert after != before
    lists = frame["incremental"][pathlists.SECTION]
    assert lists[before] is None and "lib/module_new.py" in lists[after]
    # a snapshot keeps no entry put away
    content = _cache_of(repo)
    content.put("seen", "x", 1)
    content._generation = ""  # the next save writes a snapshot
    content.save()
    assert before not in _cache_of(repo).section(pathlists.SECTION)
    assert after in _cache_of(repo).section(pathlists.SECTION)
