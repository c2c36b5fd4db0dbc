"""Bad input: every file gets a record with a reason, the rest of the repo is still extracted."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

from subguard.core.config import Config
from subguard.core.model import FileStatus
from subguard.extract.base import RepoContext, SourceFile
from subguard.extract.python.extractor import EXTRACTOR
from subguard.scan.extraction import scan_repo

GOOD = b'from rocketmq.client import PushConsumer\nc = PushConsumer("GID_ok")\nc.subscribe("ok", print, "A")\n'

BAD = {
    "syntax.py": (b"import rocketmq\n\ndef broken(:\n    pass\n", FileStatus.FAILED, "syntax error at line 3"),
    "latin.py": (
        b"# rocketmq consumer\nNAME = '\xe9t\xe9'\n",
        FileStatus.FAILED,
        "not valid utf-8 (byte 0xe9 at line 2)",
    ),
    "blob.py": (b"rocketmq\x00\x01\x02binary", FileStatus.SKIPPED, "binary file (NUL byte at offset 8)"),
    "deep.py": (b"import rocketmq\nx = " + b"[" * 150 + b"]" * 150 + b"\n", FileStatus.FAILED, "too deeply nested"),
    "hostile.py": (
        b"import rocketmq\nx = " + b" + ".join([b'"a"'] * 30000) + b"\n",
        FileStatus.FAILED,
        "too deeply nested",
    ),
    "parens.py": (
        b"import rocketmq\nx = " + b"(" * 5000 + b")" * 5000 + b"\n",
        FileStatus.FAILED,
        "too many nested parentheses",
    ),
}


def _ctx(tmp_path: Path, paths: frozenset[str] = frozenset()) -> RepoContext:
    return RepoContext(root=str(tmp_path), repo="t", config=Config(), paths=paths, read=lambda p: None)


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_file_gets_a_reason(tmp_path: Path, name: str) -> None:
    data, status, reason = BAD[name]
    (tmp_path / name).write_bytes(data)
    (tmp_path / "good.py").write_bytes(GOOD)
    result = scan_repo(tmp_path, Config(), extractors=[EXTRACTOR])
    records = {r.path: r for r in result.files}
    assert records[name].status is status
    assert reason in records[name].reason
    assert records["good.py"].status is FileStatus.PARSED
    assert [c.group.value for c in result.consumers] == ["GID_ok"]


def test_empty_file_is_skipped_with_reason(tmp_path: Path) -> None:
    # the scan's prefilter never hands an empty file over; the extractor still answers for one
    result = EXTRACTOR.extract([SourceFile("empty.py", b""), SourceFile("good.py", GOOD)], _ctx(tmp_path))
    records = {r.path: r for r in result.files}
    assert records["empty.py"].status is FileStatus.SKIPPED and records["empty.py"].reason == "empty file"
    assert records["good.py"].status is FileStatus.PARSED
    assert len(result.consumers) == 1


def test_coding_cookie_is_honoured(tmp_path: Path) -> None:
    src = "# -*- coding: latin-1 -*-\nfrom rocketmq.client import PushConsumer\nc = PushConsumer('GID_caf\xe9')\n"
    result = EXTRACTOR.extract([SourceFile("cookie.py", src.encode("latin-1"))], _ctx(tmp_path))
    assert [r.status for r in result.files] == [FileStatus.PARSED]
    assert result.consumers[0].group.value == "GID_caf\xe9"


def test_broken_constants_module_leaves_value_unknown(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_bytes(b"")
    (tmp_path / "pkg" / "names.py").write_bytes(b"GROUP = (\n")
    (tmp_path / "pkg" / "use.py").write_bytes(
        b"from rocketmq.client import PushConsumer\nfrom .names import GROUP\nc = PushConsumer(GROUP)\nc.subscribe('t', print)\n"
    )
    result = scan_repo(tmp_path, Config(), extractors=[EXTRACTOR])
    records = {r.path: r for r in result.files}
    assert records["pkg/names.py"].status is FileStatus.FAILED and "syntax error" in records["pkg/names.py"].reason
    (c,) = result.consumers
    assert c.group.value is None and "pkg/names.py" in c.group.detail


def test_memo_is_used_for_the_per_file_parse(tmp_path: Path) -> None:
    calls: list[tuple[str, str]] = []
    cache: dict[tuple[str, str, bytes], object] = {}

    def memo(extractor: str, path: str, data: bytes, compute):  # type: ignore[no-untyped-def]
        calls.append((extractor, path))
        key = (extractor, path, data)
        if key not in cache:
            cache[key] = compute()
        return cache[key]

    ctx = RepoContext(root=str(tmp_path), repo="t", config=Config(), paths=frozenset(), read=lambda p: None, memo=memo)
    first = EXTRACTOR.extract([SourceFile("good.py", GOOD)], ctx)
    second = EXTRACTOR.extract([SourceFile("good.py", GOOD)], ctx)
    assert calls == [("python", "good.py"), ("python", "good.py")]
    assert first.consumers == second.consumers


def test_facts_are_picklable(tmp_path: Path) -> None:
    import pickle

    from subguard.extract.python.parse import parse_full

    src = Path(__file__).resolve().parents[1] / "fixtures" / "python" / "shop" / "orders" / "consumer.py"
    facts = parse_full("orders/consumer.py", src.read_bytes())
    assert pickle.loads(pickle.dumps(facts)) == facts


def test_fixture_copy_with_bad_files_still_extracts(tmp_path: Path) -> None:
    shop = Path(__file__).resolve().parents[1] / "fixtures" / "python" / "undecided"
    shutil.copytree(shop, tmp_path / "repo")
    for name, (data, _status, _reason) in BAD.items():
        (tmp_path / "repo" / name).write_bytes(data)
    result = scan_repo(tmp_path / "repo", Config(), extractors=[EXTRACTOR])
    assert {c.group.value for c in result.consumers} == {"GID_undecided"}
    assert sum(1 for r in result.files if r.status is not FileStatus.PARSED) == len(BAD)


def test_invalid_escapes_in_scanned_literals_print_no_warning(tmp_path: Path) -> None:
    """`"\\9"` is a DeprecationWarning (a SyntaxWarning printed by default from Python 3.12) when
    evaluated; scanning such a file must neither print it nor fail under `-W error`."""
    (tmp_path / "c.py").write_text(
        "from rocketmq.client import PushConsumer\n"
        'c = PushConsumer("g\\9x")\n'
        'c.subscribe("T\\9", print, expression=f"a\\9b")\n',
        encoding="utf-8",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = scan_repo(tmp_path, Config())
    [consumer] = result.consumers
    assert consumer.group.value == "g\\9x" and consumer.subscriptions[0].topic.value == "T\\9"
    assert consumer.subscriptions[0].expression.value == "a\\9b"
