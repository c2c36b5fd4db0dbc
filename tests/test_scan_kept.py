"""What a scan keeps between runs in its content cache: the content search's verdicts
(`extraction._Search`) and what extractors keep for their next run (`extraction._Kept`)."""

from __future__ import annotations

from pathlib import Path

from subguard.core.cache import ContentCache
from subguard.scan.discover import Candidate
from subguard.scan.extraction import _SEARCH, _Search


def _searcher(tmp_path: Path, cache: ContentCache, stats: dict[str, tuple[int, int]], reads: list[str]) -> _Search:
    by_path = {p: Candidate(p, str(tmp_path / p), size, None, mtime) for p, (size, mtime) in stats.items()}

    def read(path: str) -> bytes | None:
        reads.append(path)
        return (tmp_path / path).read_bytes()

    return _Search(cache, by_path, read)


def test_an_unchanged_file_is_not_read_again_and_two_patterns_are_kept(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"x = 1  # subguard: ignore\n")
    (tmp_path / "b.py").write_bytes(b"y = 2\n")
    stats = {"a.py": (26, 11), "b.py": (6, 12)}
    cache, reads = ContentCache(tmp_path / ".cache", "ns", lambda _m: None), []
    one, two, three = rb"ignore", rb"y = ", rb"nothing"

    assert _searcher(tmp_path, cache, stats, reads).search(one, ["a.py", "b.py"]) == ["a.py"]
    assert reads == ["a.py", "b.py"]
    assert cache.section(_SEARCH)["a.py"][:2] == (26, 11)  # one flat tuple per file: size, mtime, verdicts
    assert _searcher(tmp_path, cache, stats, reads).search(one, ["a.py", "b.py"]) == ["a.py"]
    assert reads == ["a.py", "b.py"]  # both verdicts kept: nothing read
    assert _searcher(tmp_path, cache, stats, reads).search(two, ["a.py", "b.py"]) == ["b.py"]
    assert _searcher(tmp_path, cache, stats, reads).search(one, ["b.py"]) == []  # both patterns kept
    assert reads == ["a.py", "b.py"] * 2
    assert _searcher(tmp_path, cache, stats, reads).search(three, ["b.py"]) == []
    assert _searcher(tmp_path, cache, stats, reads).search(two, ["b.py"]) == ["b.py"]  # the latest two
    assert _searcher(tmp_path, cache, stats, reads).search(one, ["b.py"]) == []  # the oldest was let go
    assert reads == ["a.py", "b.py"] * 2 + ["b.py", "b.py"]

    changed = dict(stats, **{"a.py": (26, 99)})  # touched: its verdicts are not valid any more
    assert _searcher(tmp_path, cache, changed, reads).search(one, ["a.py"]) == ["a.py"]
    assert reads[-1] == "a.py" and len(reads) == 7


def test_an_entry_of_the_former_shape_is_searched_again(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"# subguard: ignore\n")
    cache, reads = ContentCache(tmp_path / ".cache", "ns", lambda _m: None), []
    cache.put(_SEARCH, "a.py", ((19, 5), (("k", False),)))  # (stat, verdicts), as an older cache kept it
    assert _searcher(tmp_path, cache, {"a.py": (19, 5)}, reads).search(rb"ignore", ["a.py"]) == ["a.py"]
    assert reads == ["a.py"]


def test_kept_values_are_pickled_one_by_one_and_written_only_when_they_change(tmp_path: Path) -> None:
    """What an extractor keeps (`RepoContext.keep`) is unpickled when asked for, once a run."""
    from subguard.scan.extraction import _KEPT, _Kept

    cache = ContentCache(tmp_path / ".cache", "ns", lambda _m: None)
    first = _Kept(cache, "python", "repo")
    assert first.last("unit:a.py") is None
    value = {"consumers": ("c",)}
    first.keep("unit:a.py", value)
    key = "python\0repo\0unit:a.py"
    blob = cache.section(_KEPT)[key]
    assert isinstance(blob, bytes)  # kept pickled: loading the state imports nothing of it
    later = _Kept(cache, "python", "repo")  # the next run
    got = later.last("unit:a.py")
    assert got == value and got is not value and later.last("unit:a.py") is got  # once a run
    later.keep("unit:a.py", {"consumers": ("c",)})  # equal: the same pickle, not written again
    assert cache.section(_KEPT)[key] is blob
    later.keep("unit:a.py", lambda: None)  # unpicklable: forgotten, the next run does the work
    assert cache.section(_KEPT)[key] is None and later.last("unit:a.py") is None
    later.keep("gone", None)  # forgetting what was never kept writes nothing
    assert "python\0repo\0gone" not in cache.section(_KEPT)
    cache.put(_KEPT, key, {"an object": "as a former release kept it"})
    assert _Kept(cache, "python", "repo").last("unit:a.py") is None
