"""Tree stamps: the same tree gives the same digest however the walk is split, and any change to a
listed entry changes it, while excluded folders and skipped paths do not count."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from subguard.scan import treestamp
from subguard.scan.listing import excluded_dir


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """Twelve services of three folders each: enough folders to share out between two processes."""
    root = tmp_path / "tree"
    for s in range(12):
        for sub in ("app", "conf", "deploy"):
            folder = root / f"svc{s:02d}" / sub
            folder.mkdir(parents=True)
            for f in range(3):
                (folder / f"f{f}.py").write_text(f"# {s} {sub} {f}\n", encoding="utf-8")
    (root / "README.md").write_text("top\n", encoding="utf-8")
    (root / "svc00" / "node_modules" / "dep").mkdir(parents=True)
    (root / "svc00" / "node_modules" / "dep" / "index.js").write_text("x\n", encoding="utf-8")
    os.symlink("svc01", root / "link-to-svc01")
    return root


def stamp(root: Path, skip: tuple[str, ...] = ()) -> tuple[str, int]:
    return treestamp.walk_stamp(str(root), skip, excluded_dir, str(root))


def test_split_and_sequential_walks_agree(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    split = stamp(tree)
    assert treestamp._Walk(str(tree), (), excluded_dir).frontier()  # this tree is shared out
    monkeypatch.setattr(treestamp, "SPLIT_FRONTIER", 10**6)
    assert stamp(tree) == split
    monkeypatch.setattr(treestamp, "SPLIT_FRONTIER", 2)
    monkeypatch.setattr(treestamp, "_can_fork", lambda: False)  # no child: the parent does it all
    assert stamp(tree) == split
    assert split[1] == max(
        p.lstat().st_ctime_ns
        for p in tree.rglob("*")
        if "node_modules" not in p.parts and not p.is_dir() or p.is_symlink()
    )


@pytest.mark.parametrize(
    "change",
    [
        lambda r: (r / "svc11" / "deploy" / "f2.py").write_text("# edited\n", encoding="utf-8"),  # the child's share
        lambda r: (r / "svc00" / "app" / "f0.py").write_text("# edited\n", encoding="utf-8"),  # the parent's share
        lambda r: (r / "README.md").unlink(),  # above the shared folders
        lambda r: (r / "svc05" / "conf" / "new.yaml").write_text("a: 1\n", encoding="utf-8"),
        lambda r: os.rename(r / "svc07" / "app" / "f1.py", r / "svc07" / "app" / "g1.py"),
        lambda r: os.chmod(r / "svc03" / "app" / "f0.py", 0o600),
        lambda r: (r / "svc02" / "conf").rename(r / "svc02" / "config"),
        lambda r: os.utime(r / "svc09" / "app" / "f0.py", ns=(1, 1)),  # mtime set back, same size
    ],
    ids=["child-share", "parent-share", "top-level", "added", "renamed", "mode", "folder-renamed", "mtime-back"],
)
def test_every_change_to_a_listed_entry_changes_the_stamp(tree: Path, change: object) -> None:
    before = stamp(tree)[0]
    change(tree)  # type: ignore[operator]
    assert stamp(tree)[0] != before


def test_excluded_folders_and_skipped_paths_do_not_count(tree: Path) -> None:
    before = stamp(tree, ("svc04/deploy/",))[0]
    (tree / "svc00" / "node_modules" / "dep" / "index.js").write_text("changed\n", encoding="utf-8")
    (tree / "svc04" / "deploy" / "f0.py").write_text("# output the run wrote itself\n", encoding="utf-8")
    assert stamp(tree, ("svc04/deploy/",))[0] == before
    assert stamp(tree)[0] != before


def test_unreadable_folder_is_stamped_not_fatal(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder that cannot be opened (permissions: this machine runs tests as root, who reads
    everything, so the refusal is simulated) is stamped as unreadable; the rest is still walked."""
    before = stamp(tree)[0]
    real_open = os.open

    def refuse(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if path == "app" and dir_fd is not None and os.readlink(f"/proc/self/fd/{dir_fd}").endswith("svc06"):
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(treestamp, "_can_fork", lambda: False)
    monkeypatch.setattr(os, "open", refuse)
    refused = stamp(tree)[0]
    monkeypatch.undo()
    assert refused != before and stamp(tree)[0] == before


def test_names_stamp_split_and_sequential_agree(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names = sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file()) + ["gone.txt"]
    monkeypatch.setattr(treestamp, "SPLIT_MIN_NAMES", 4)
    split = treestamp.names_stamp(str(tree), names, "seed")
    monkeypatch.setattr(treestamp, "SPLIT_MIN_NAMES", 10**6)
    assert treestamp.names_stamp(str(tree), names, "seed") == split
    assert treestamp.names_stamp(str(tree), names, "other seed")[0] != split[0]
    (tree / names[-2]).write_text("edited\n", encoding="utf-8")  # in the child's half
    monkeypatch.setattr(treestamp, "SPLIT_MIN_NAMES", 4)
    assert treestamp.names_stamp(str(tree), names, "seed")[0] != split[0]


def test_a_failing_child_is_done_by_the_parent(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = stamp(tree)
    real = treestamp._folder_digests

    def broken(walk: treestamp._Walk, rels: list[str]) -> tuple[dict[str, bytes], int]:
        if os.getpid() != parent:
            raise RuntimeError("child fails")
        return real(walk, rels)

    parent = os.getpid()
    monkeypatch.setattr(treestamp, "_folder_digests", broken)
    assert stamp(tree) == expected


def test_row_encoding_depends_on_values_not_on_object_identity() -> None:
    """The same stat values give the same bytes whether or not two fields share one int object (the
    regression: marshal's default format writes back-references for shared objects)."""
    import marshal

    big = 1795357076541463750
    shared = [("a.py", 33188, 1, big, big, 7)]
    separate = [("a.py", 33188, 1, int(str(big)), int(str(big)), 7)]
    assert shared[0][3] is shared[0][4] and separate[0][3] is not separate[0][4]
    assert marshal.dumps(shared, treestamp._CANONICAL) == marshal.dumps(separate, treestamp._CANONICAL)
    assert marshal.dumps(shared) != marshal.dumps(separate)  # why the format is pinned


def test_a_root_given_as_a_link_to_a_folder_is_walked(tree: Path, tmp_path: Path) -> None:
    """`subguard check link-to-repo`: the stamp covers the folder behind the link (a regression:
    opening the root with O_NOFOLLOW made every such tree look unreadable, hence unchanged)."""
    link = tmp_path / "link-to-tree"
    os.symlink(tree, link)
    before = treestamp.walk_stamp(str(link), (), excluded_dir, "seed")[0]
    assert before != treestamp.walk_stamp(str(tmp_path / "missing"), (), excluded_dir, "seed")[0]
    (tree / "svc03" / "app" / "f1.py").write_text("# edited\n", encoding="utf-8")
    assert treestamp.walk_stamp(str(link), (), excluded_dir, "seed")[0] != before
