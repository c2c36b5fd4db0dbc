"""Walks kept current by inotify (`subguard.scan.watch`): after any sequence of changes, the stamp a
watched walk gives is the digest, newest ctime and rows a new walk gives, or none at all."""

from __future__ import annotations

import os
import random
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from subguard.scan import discover, listing, runmemo, treestamp, watch
from subguard.scan.discover import Candidate
from subguard.scan.listing import excluded_dir

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/mountinfo"), reason="inotify is Linux only")

SKIP = ("skipped/",)
RUN_MEMO_ROOT = watch.PARAMS[watch.ROOT]  # how the run memo walks a scan root (`runmemo._watch_params`)


@pytest.fixture(autouse=True)
def _kind() -> Iterator[None]:
    # a scan root's kind (its candidates are made ahead), walked as here
    watch.PARAMS[watch.ROOT] = lambda folder, extra: (folder, SKIP, excluded_dir, "seed\0" + folder, None)
    yield
    watch.forget()
    watch.PARAMS[watch.ROOT] = RUN_MEMO_ROOT


Listed = list[tuple[str, "tuple[int, int, int] | None"]] | None


def _fresh(root: Path) -> tuple[tuple[str, int] | None, dict[str, bytes], Listed]:
    """A new walk's stamp, rows and entries as the scan lists them (`listing.take_shared`)."""
    rows = treestamp.Rows()
    stamp = treestamp.walk_stamp(str(root), SKIP, excluded_dir, "seed\0" + str(root), None, keep=rows)
    return stamp, rows.complete(), listing._walk_order(rows.complete())


def _watched(key: watch.Key) -> tuple[tuple[str, int] | None, dict[str, bytes], Listed]:
    """The same from the watched walk, once brought up to date."""
    watch.refresh()
    rows = treestamp.Rows()
    return watch.stamp(key, rows), rows.rows, rows.order


def _made_as_listed(root: Path, key: watch.Key) -> None:
    """What the server made ahead of the watched walk's entries (`watch.AHEAD`: the scan's
    candidates) is each file's candidate as lstat gives it now, or nothing when an entry is not a
    regular file with its stat."""
    rows = treestamp.Rows()
    assert watch.stamp(key, rows) is not None and rows.order is not None
    want: list[Candidate] | None = []
    for rel, st in rows.order:
        real = os.lstat(root / rel)
        if st is None or not stat.S_ISREG(real.st_mode) or want is None:
            want = None
            continue
        want.append(Candidate(rel, f"{root}/{rel}", real.st_size, None, real.st_mtime_ns))
    made = getattr(rows.made, "candidates", None)
    assert made == (tuple(want) if want is not None else None)
    if want is not None:  # their index, made ahead too, equals the one a run makes
        made_index, fresh = getattr(rows.made, "index", None), discover.Index(tuple(want))
        assert made_index is not None and made_index.__dict__.keys() >= {"by_path", "paths", "stats", "names", "listed"}
        for part in ("by_path", "paths", "stats", "names", "listed"):
            assert getattr(made_index, part) == getattr(fresh, part), part
        assert made_index._endings and made_index._endings == {k: fresh.ending(k) for k in made_index._endings}


def _made_ahead_seen(root: Path, key: watch.Key) -> bool:
    rows = treestamp.Rows()
    return watch.stamp(key, rows) is not None and len(getattr(rows.made, "candidates", ())) == 12


def _tree(root: Path) -> None:
    for i in range(4):
        (root / f"d{i}" / "e").mkdir(parents=True)
        for j in range(3):
            (root / f"d{i}" / f"f{j}.py").write_text("x" * j)


def _watched_tree(tmp_path: Path) -> tuple[Path, watch.Key]:
    """A small tree in `tmp_path` and the key it is watched by (not watched yet)."""
    root = tmp_path / "tree"
    root.mkdir()
    _tree(root)
    return root, (watch.ROOT, str(root), "")


def _listed(root: Path) -> tuple[list[str], list[str]]:
    files: list[str] = []
    folders: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not excluded_dir(d)]
        folders.append(dirpath)
        files += [os.path.join(dirpath, f) for f in filenames]
    return files, folders


def _change(rng: random.Random, root: Path, outside: Path, step: int) -> None:
    """One random change of the kinds editors, git and build tools make."""
    files, folders = _listed(root)
    op = rng.choice(
        "write write touch create delete mkdir rmtree move-file move-folder chmod excluded link skipped "
        "replace hardlink write-through-link".split()
    )
    try:
        if op == "write" and files:
            with open(rng.choice(files), "a") as fh:
                fh.write("y")
        elif op == "touch" and files:
            os.utime(rng.choice(files), ns=(1, rng.randrange(10**18)), follow_symlinks=False)
        elif op == "create":
            Path(rng.choice(folders), f"n{step}.py").write_text("z")
        elif op == "delete" and files:
            os.unlink(rng.choice(files))
        elif op == "mkdir":
            Path(rng.choice(folders), f"m{step}", "deep").mkdir(parents=True)
        elif op == "rmtree" and len(folders) > 1:
            shutil.rmtree(rng.choice(folders[1:]))
        elif op == "move-file" and files:
            os.rename(rng.choice(files), os.path.join(rng.choice(folders), f"mv{step}.py"))
        elif op == "move-folder" and len(folders) > 2:
            src, dst = rng.choice(folders[1:]), os.path.join(rng.choice(folders), f"md{step}")
            if not dst.startswith(src + "/"):
                os.rename(src, dst)
        elif op == "chmod" and len(folders) > 1:
            os.chmod(rng.choice(folders[1:]), rng.choice([0o755, 0o700, 0o555]))
        elif op == "excluded":
            Path(rng.choice(folders), "node_modules", "x").mkdir(parents=True, exist_ok=True)
        elif op == "link":
            os.symlink(rng.choice(folders), os.path.join(rng.choice(folders), f"ln{step}"))
        elif op == "skipped":
            (root / "skipped").mkdir(exist_ok=True)
            (root / "skipped" / f"s{step}").write_text("s")
        elif op == "replace" and files:  # an editor's atomic save: a new file renamed over the old
            target = rng.choice(files)
            Path(target + ".tmp").write_text(f"new {step}")
            os.rename(target + ".tmp", target)
        elif op == "hardlink" and files:
            source = rng.choice(files)
            os.link(source, outside / f"l{step}", follow_symlinks=False)
            st = os.lstat(source)  # linking sends no event: the next change of the file does
            os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)
        elif op == "write-through-link":
            links = sorted(outside.iterdir())
            if links and not rng.choice(links).is_symlink():
                with open(rng.choice(links), "a") as fh:  # no event in the watched folder
                    fh.write("q")
    except OSError:
        pass  # a move into itself, a name taken: nothing changed


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_watched_walk_equals_a_new_walk_after_every_change(tmp_path: Path, seed: int) -> None:
    root, outside = tmp_path / "tree", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    _tree(root)
    key = (watch.ROOT, str(root), "")
    assert watch.start(key)
    assert _watched(key) == _fresh(root)
    _made_as_listed(root, key)
    assert _made_ahead_seen(root, key)
    rng = random.Random(seed)
    compared = 0
    for step in range(300):
        _change(rng, root, outside, step)
        if rng.random() < 0.4:
            continue  # several changes between two runs
        assert _watched(key) == _fresh(root), f"step {step}"
        _made_as_listed(root, key)
        compared += 1
    assert compared > 150
    assert watch.watched() == [[watch.ROOT, str(root)]]


def test_a_stamp_is_taken_only_from_a_walk_no_event_came_after(tmp_path: Path) -> None:
    root, key = _watched_tree(tmp_path)
    assert watch.stamp(key) is None and watch.wanted() == [key]  # not watched: walked, and wanted
    assert watch.start(key)
    (root / "d0" / "f0.py").write_text("changed")
    assert watch.stamp(key) is None  # an event since the refresh: the run walks
    assert watch.wanted() == [key]
    assert _watched(key) == _fresh(root)
    assert watch.wanted() == []


def test_a_run_forked_before_the_server_read_an_event_walks(tmp_path: Path) -> None:
    """The server reads the events a run's own writes (or an edit) queue while the run goes on: the
    queue is empty again for the run, whose copy of the walk is older. It must walk."""
    root, key = _watched_tree(tmp_path)
    assert watch.start(key)
    answer_r, answer_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the run
        code = 1
        try:
            os.read(go_r, 1)  # once the server has read the event
            os.write(answer_w, b"walks" if watch.stamp(key) is None else b"stale")
            code = 0
        finally:
            os._exit(code)
    (root / "d0" / "f0.py").write_text("changed")
    watch.refresh()  # the server: the event is read, and gone from the queue
    os.write(go_w, b"x")
    assert os.read(answer_r, 5) == b"walks"
    assert os.waitpid(pid, 0)[1] == 0
    assert _watched(key) == _fresh(root)  # the server's own walk is current
    for fd in (answer_r, answer_w, go_r, go_w):
        os.close(fd)


def test_lost_events_walk_the_tree_again(tmp_path: Path) -> None:
    root, key = _watched_tree(tmp_path)
    assert watch.start(key)
    a, b = root / "d0" / "f1.py", root / "d1" / "f1.py"
    for i in range(20000):  # more events than the queue holds (16,384 by default): it overflows
        os.utime(a if i % 2 else b, ns=(i, i))
    (root / "late.py").write_text("after the overflow")
    assert _watched(key) == _fresh(root)


def test_a_removed_root_is_no_longer_watched(tmp_path: Path) -> None:
    root, key = _watched_tree(tmp_path)
    assert watch.start(key)
    shutil.rmtree(root)
    assert _watched(key)[0] is None
    assert watch.watched() == []


def test_only_local_file_systems_are_watched(tmp_path: Path) -> None:
    assert watch.local_file_system(str(tmp_path))
    assert not watch.local_file_system("/proc/self")
    assert not watch.start((watch.ROOT, "/proc/self", ""))


def test_the_run_memo_stamps_a_watched_root_as_it_walks_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`runmemo.root_listing` through a watched walk: the same digest, newest ctime and rows; the
    root's key is what the server is told to watch."""
    watch.PARAMS[watch.ROOT] = RUN_MEMO_ROOT
    root = tmp_path / "repo"
    root.mkdir()
    _tree(root)
    globs = [["d1/**"], str(tmp_path)]
    runmemo.root_listing(str(root), ["d2/e"], globs, [])
    [key] = watch.wanted()
    assert key[:2] == ("root", str(root))
    assert watch.start(key)
    (root / "d3" / "f0.py").write_text("edited")
    watch.refresh()
    kept: list[object] = []
    watched = runmemo.root_listing(str(root), ["d2/e"], globs, kept)
    assert watch.wanted() == []  # answered by the watched walk
    watch.forget()
    alone: list[object] = []
    walked = runmemo.root_listing(str(root), ["d2/e"], globs, alone)
    assert watch.wanted() == [key]  # walked
    assert watched == walked
    assert isinstance(kept[0], treestamp.Rows) and isinstance(alone[0], treestamp.Rows)
    assert kept[0].rows == alone[0].complete()
    assert kept[0].order == listing._walk_order(alone[0].complete())


def test_a_tree_past_the_watch_limit_is_not_watched_nor_tried_again_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, key = _watched_tree(tmp_path)
    monkeypatch.setattr(watch, "MOST_FOLDERS", 3)  # as when inotify's per-user watch limit is reached
    assert not watch.start(key)
    assert watch.watched() == []
    monkeypatch.setattr(watch, "MOST_FOLDERS", 100)
    assert not watch.start(key)  # refused a moment ago: the runs walk it meanwhile
    monkeypatch.setattr(watch, "RETRY_SECONDS", 0.0)
    assert watch.start(key)
    assert _watched(key) == _fresh(root)


def test_a_folder_that_turns_unreadable_leaves_the_stamp_as_it_leaves_a_new_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """chmod 0 on a folder: its rows and newest ctime leave the stamp, as they leave a new walk's (a
    folder of mode 0 refuses to open here even for root, as it does for any other user)."""
    real_open = os.open

    def open_as_a_user(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if flags & os.O_DIRECTORY and stat.S_IMODE(os.stat(path, dir_fd=dir_fd).st_mode) == 0:
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(treestamp.os, "open", open_as_a_user)
    root, key = _watched_tree(tmp_path)
    assert watch.start(key)
    (root / "d1" / "f0.py").write_text("the newest entry")
    assert _watched(key) == _fresh(root)
    (root / "d1").chmod(0)
    try:
        stamp = _watched(key)
        assert stamp == _fresh(root)  # no rows, nor a newest ctime, of what it holds
        assert "d1/e" not in stamp[1]
    finally:
        (root / "d1").chmod(0o755)
    assert _watched(key) == _fresh(root)
