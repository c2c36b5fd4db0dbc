"""Per-file parses in worker processes give exactly the results of the inline path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from subguard.core.config import Config
from subguard.core.limits import FileFailure
from subguard.scan.extraction import scan_repo
from subguard.scan.parallel import MIN_FILES, Prefetcher

LISTENER = """package com.example.svc{i};

import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;

@RocketMQMessageListener(consumerGroup = "group-{g}", topic = "Topic{g}", selectorExpression = "{expr}")
public class Listener{i} implements RocketMQListener<String> {{
    public void onMessage(String m) {{ }}
}}
"""


def _repo(root: Path, n: int) -> Path:
    for i in range(n):
        d = root / "src" / "main" / "java" / "com" / "example" / f"svc{i}"
        d.mkdir(parents=True)
        expr = "TagA||TagB" if i % 5 else "TagB"
        (d / f"Listener{i}.java").write_text(LISTENER.format(i=i, g=i // 2, expr=expr), encoding="utf-8")
    (root / "src" / "main" / "java" / "Broken.java").write_text(
        "import org.apache.rocketmq.x;\nclass {", encoding="utf-8"
    )
    py = root / "workers"
    py.mkdir()
    (py / "names.py").write_text('GROUP = "py-group"\n', encoding="utf-8")
    for i in range(n):
        (py / f"worker_{i}.py").write_text(
            "from rocketmq.client import PushConsumer\nfrom workers.names import GROUP\n\n"
            f"c = PushConsumer(GROUP)\nc.subscribe('PyTopic', print, expression='{'a||b' if i % 3 else 'b||a'}')\n",
            encoding="utf-8",
        )
    (py / "broken.py").write_text(
        "import rocketmq.client\nfrom rocketmq.client import PushConsumer\ndef (:\n", encoding="utf-8"
    )
    return root


def test_parallel_scan_equals_inline_scan(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", MIN_FILES * 3)
    inline = scan_repo(repo, Config(jobs=1))
    parallel = scan_repo(repo, Config(jobs=2))
    assert len(inline.consumers) == MIN_FILES * 3 * 2
    assert parallel.consumers == inline.consumers
    assert parallel.files == inline.files
    assert any(r.status.value == "failed" and r.path.endswith("Broken.java") for r in parallel.files)
    assert any(r.status.value == "failed" and r.path.endswith("broken.py") for r in parallel.files)
    assert {c.group.value for c in parallel.consumers if c.client.value.startswith("python")} == {"py-group"}


def _double(path: str, data: bytes) -> bytes:
    if path == "bad":
        raise ValueError("cannot parse")
    return data * 2


def _die(path: str, data: bytes) -> bytes:
    os._exit(3)  # a worker process that crashes outright


def test_prefetched_results_and_failures_are_served_by_the_memo() -> None:
    calls: list[str] = []

    def inner(kind: str, path: str, data: bytes, compute):  # type: ignore[no-untyped-def]
        calls.append(path)
        return compute()

    ahead = Prefetcher(inner, jobs=2, seconds=10)
    items = [(f"f{i}", bytes([i])) for i in range(MIN_FILES)] + [("bad", b"x")]
    ahead.prefetch("k", items, _double)
    assert ahead.memo("k", "f3", bytes([3]), lambda: pytest.fail("should be prefetched")) == bytes([3]) * 2
    with pytest.raises(FileFailure, match="cannot parse"):
        ahead.memo("k", "bad", b"x", lambda: pytest.fail("should be prefetched"))


def test_a_crashing_worker_leaves_everything_to_the_inline_path() -> None:
    ahead = Prefetcher(lambda k, p, d, compute: compute(), jobs=2, seconds=10)
    items = [(f"f{i}", bytes([i])) for i in range(MIN_FILES)]
    ahead.prefetch("k", items, _die)
    assert ahead.memo("k", "f1", bytes([1]), lambda: "inline") == "inline"


def test_small_batches_and_one_job_stay_inline() -> None:
    ahead = Prefetcher(lambda k, p, d, compute: compute(), jobs=1, seconds=10)
    ahead.prefetch("k", [(f"f{i}", b"") for i in range(MIN_FILES * 2)], _die)
    assert ahead.memo("k", "f1", b"", lambda: "inline") == "inline"
