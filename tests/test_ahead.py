"""Parsing a run's edited consumer files ahead, on the other core (`subguard.scan.ahead`).

The run after an edit of a file the Python extractor parsed takes that file's parse from a child
forked right after the run memo's miss: the run itself never imports libcst, and prints what a
`--no-cache` run prints. A child's answer for other bytes, or one that took longer than the parse
budget, is not taken.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from subguard.scan import ahead, runmemo

# one consumer module; "{tags}" is its tag expression (shared with the cache, action, hook and serve tests)
CONSUMER = (Path(__file__).parent / "fixtures" / "snippets" / "order_consumer.py.tmpl").read_text(encoding="utf-8")

RUN = """
import sys
from subguard.cli.entry import run
from subguard.scan import ahead
taken = []
real = ahead.take
ahead.take = lambda *a: taken.append(a[1]) or real(*a) if a[0] == "python" else real(*a)
code = run(sys.argv[1:])
print("libcst" in sys.modules, file=sys.__stderr__)
sys.exit(code)
"""


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for name, tags in (("one", "TagA"), ("two", "TagA")):
        (root / name).mkdir(parents=True)
        (root / name / "consumer.py").write_text(CONSUMER.format(tags=tags))
    return root


def _check(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(repo.parent / "xdg"), "NO_COLOR": "1"}
    env.pop("SUBGUARD_NO_RUN_MEMO", None)
    cmd = [sys.executable, "-c", RUN, "check", ".", "--no-simulate", "--format", "json", *args]
    return subprocess.run(cmd, cwd=repo, capture_output=True, text=True, timeout=120, env=env, check=False)


def test_an_edited_consumer_file_is_parsed_ahead_and_the_run_loads_no_libcst(repo: Path) -> None:
    first = _check(repo)
    assert first.returncode == 0 and first.stderr.splitlines()[-1] == "True", first.stderr  # parsed here
    time.sleep(runmemo.RACY_NS / 1e9 + 0.05)
    assert _check(repo).returncode == 0  # memoised, with the aside
    (repo / "two" / "consumer.py").write_text(CONSUMER.format(tags="TagB"))
    time.sleep(runmemo.RACY_NS / 1e9 + 0.05)
    edited = _check(repo)
    assert edited.returncode == 1 and "SG102" in edited.stdout
    assert edited.stderr.splitlines()[-1] == "False", edited.stderr  # the child parsed it
    assert edited.stdout == _check(repo, "--no-cache").stdout


def test_an_answer_for_other_bytes_or_over_the_budget_is_not_taken(tmp_path: Path) -> None:
    path = tmp_path / "c.py"
    path.write_bytes(CONSUMER.format(tags="TagA").encode())
    data = path.read_bytes()
    digest = hashlib.sha1(data).hexdigest()
    try:
        ahead.start({str(tmp_path): (["c.py", "other.py"], {"c.py": "python", "other.py": "java"}, 1 << 20)})
        assert ahead.missing(ahead.take("python", "c.py", "0" * 40, 10.0))  # the file changed since
        assert ahead.missing(ahead.take("python-attrs", "c.py", digest, 10.0))  # another parse
        facts = ahead.take("python", "c.py", digest, 10.0)
        assert not ahead.missing(facts)
        from subguard.extract.python.parse import parse_full

        assert facts == parse_full("c.py", data)
        assert ahead.missing(ahead.take("python", "c.py", digest, 1e-9))  # longer than a tiny budget
    finally:
        ahead.forget()
    assert ahead.missing(ahead.take("python", "c.py", digest, 10.0))  # nothing after the run


def test_a_child_that_does_not_answer_in_time_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "slow.py"
    path.write_bytes(b"import rocketmq\n")
    monkeypatch.setattr(ahead, "_parse", lambda jobs: time.sleep(30) or [])
    ahead.start({str(tmp_path): (["slow.py"], {"slow.py": "python"}, 1 << 20)})
    child = ahead._pending
    assert child is not None
    pid = child.pid
    began = time.monotonic()
    assert ahead.missing(ahead.take("python", "slow.py", hashlib.sha1(b"import rocketmq\n").hexdigest(), 0.3))
    assert time.monotonic() - began < 5
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # stopped and reaped
    ahead.forget()


def test_only_regular_files_within_the_limit_are_read(tmp_path: Path) -> None:
    """A changed entry that became a FIFO, a link or a file over the size limit is not read ahead
    (opening a FIFO would block the run before it starts)."""
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "big.py").write_bytes(b"import rocketmq\n" * 100)
    (tmp_path / "target.py").write_bytes(b"import rocketmq\n")
    os.symlink(tmp_path / "target.py", tmp_path / "link.py")
    parsed = {name: "python" for name in ("fifo.py", "big.py", "link.py")}
    try:
        ahead.start({str(tmp_path): (list(parsed), parsed, 200)})
        assert ahead._pending is None  # nothing to parse: no child
    finally:
        ahead.forget()
