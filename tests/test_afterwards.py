"""Work a run does for the next run only, put off until its answer is out (`subguard.core.afterwards`)."""

from __future__ import annotations

import io
import os
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from subguard.core import afterwards
from subguard.scan import runmemo

CONSUMER = (Path(__file__).parent / "fixtures" / "snippets" / "order_consumer.py.tmpl").read_text(encoding="utf-8")


def test_later_work_is_done_at_once_unless_a_run_defers_it() -> None:
    done: list[str] = []
    afterwards.later(lambda: done.append("now"))
    assert done == ["now"]
    with afterwards.deferring() as finish:
        afterwards.later(lambda: done.append("first"))
        afterwards.later(lambda: done.append("second"))
        assert done == ["now"]
        afterwards.now()
        assert done == ["now", "first", "second"]
        afterwards.later(lambda: done.append("third"))
        finish()
        assert done[-1] == "third"
        finish()  # each once
    assert done == ["now", "first", "second", "third"]


def test_work_left_queued_is_done_when_the_run_fails() -> None:
    done: list[str] = []
    with pytest.raises(KeyboardInterrupt), afterwards.deferring():
        afterwards.later(lambda: done.append("cache"))
        raise KeyboardInterrupt
    assert done == ["cache"]
    afterwards.later(lambda: done.append("after"))  # no run defers any more
    assert done == ["cache", "after"]


def test_a_run_answers_before_it_writes_its_caches_and_run_memo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`check_here(answer=...)`: when the answer is given, the report is written whole and nothing
    for the next run is (the content cache, the run memo); once the run returns, both are, and the
    next run replays."""
    from subguard.cli.entry import check_here

    root = tmp_path / "repo"
    (root / "svc").mkdir(parents=True)
    (root / "svc" / "consumer.py").write_text(CONSUMER.format(tags="TagA"))
    monkeypatch.chdir(root)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("SUBGUARD_NO_SERVER", "1")
    monkeypatch.delenv("SUBGUARD_NO_RUN_MEMO", raising=False)
    monkeypatch.setattr(runmemo, "RACY_NS", 0)
    cache = tmp_path / "cache"
    (root / ".subguard.yaml").write_text(f"cache-dir: {cache}\n")
    out = tmp_path / "report.json"
    argv = ["check", ".", "--no-simulate", "--format", "json", "--output", str(out)]
    memo = runmemo.memo_path(argv[1:])
    seen: list[tuple[int, bool, bool, bool]] = []

    def answer(code: int) -> None:
        seen.append((code, out.read_text().rstrip().endswith("}"), cache.exists(), os.path.exists(memo)))

    streams = [io.TextIOWrapper(io.BytesIO(), encoding="utf-8") for _ in range(2)]
    with redirect_stdout(streams[0]), redirect_stderr(streams[1]):
        code = check_here(argv, answer=answer)
        assert seen == [(0, True, False, False)]
        assert code == 0
        assert cache.exists() and os.path.exists(memo)
        assert check_here(argv, answer=answer) == 0  # replayed: no answer is asked for
    assert len(seen) == 1
