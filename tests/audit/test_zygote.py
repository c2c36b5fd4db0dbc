"""The worker daemon started beside the JVM (`subguard.audit.zygote`): a local session's Python workers
fork from it when its start-up variables match, from Spark's own daemon when they do not, and an
unused one exits when the audit closes it. Real JVMs, each in a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, os, sys
from subguard.audit import driver, zygote

early = zygote.start()
if sys.argv[1] == "other-seed":
    os.environ["PYTHONHASHSEED"] = "7"  # the JVM's daemon gets another seed than the zygote
spark, _ = driver.launch("local[2]")
sc = spark.sparkContext
rows = sc.parallelize(range(4), 2).map(lambda i: (i * i, os.getppid(), hash("subguard"))).collect()
print(json.dumps({"zygote": early.proc.pid, "rows": rows, "seed": os.environ.get("PYTHONHASHSEED", "0")}))
early.close()
"""


def _run(mode: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_GATEWAY_PORT", "PYTHONHASHSEED")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def _hash_with_seed(seed: str) -> int:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run([sys.executable, "-c", "print(hash('subguard'))"], capture_output=True, text=True, env=env)
    return int(done.stdout)


@pytest.mark.slow
def test_workers_fork_from_the_zygote() -> None:
    got = _run("same")
    assert [r[0] for r in got["rows"]] == [0, 1, 4, 9]
    assert {r[1] for r in got["rows"]} == {got["zygote"]}  # every worker's parent: the zygote
    assert {r[2] for r in got["rows"]} == {_hash_with_seed("0")}  # the seed Spark gives its workers


@pytest.mark.slow
def test_another_start_up_seed_is_refused() -> None:
    got = _run("other-seed")
    assert [r[0] for r in got["rows"]] == [0, 1, 4, 9]
    assert got["zygote"] not in {r[1] for r in got["rows"]}  # Spark's own daemon forked them
    assert {r[2] for r in got["rows"]} == {_hash_with_seed("7")}


def test_unused_zygote_exits_when_closed() -> None:
    from subguard.audit import zygote

    early = zygote.start()
    assert early is not None
    path = os.environ[zygote.ENV]
    deadline = time.monotonic() + 60
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert os.path.exists(path)
    early.close()
    assert early.proc.wait(timeout=60) == 0
    assert zygote.ENV not in os.environ and not os.path.exists(early.folder)


def test_no_zygote_no_hand_over(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from subguard.audit import zygote

    monkeypatch.delenv(zygote.ENV, raising=False)
    assert zygote.hand_over() is False
    monkeypatch.setenv(zygote.ENV, str(tmp_path / "gone"))
    assert zygote.hand_over() is False


def test_zygote_of_a_killed_audit_leaves_nothing() -> None:
    """An audit process that ends without closing its zygote (killed): the zygote sees its stdin end,
    removes its socket and folder, and exits."""
    script = (
        "import os, sys, time\n"
        "from subguard.audit import zygote\n"
        "early = zygote.start()\n"
        "while not os.path.exists(os.environ[zygote.ENV]): time.sleep(0.05)\n"
        "print(early.folder, early.proc.pid, flush=True)\n"
        "os._exit(0)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    folder, pid = done.stdout.split()
    deadline = time.monotonic() + 60
    while (os.path.exists(folder) or _alive(int(pid))) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(folder) and not _alive(int(pid))


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_long_tmpdir_puts_the_socket_under_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A temporary folder whose path leaves no room for a Unix socket's name: the zygote's socket is
    made under /tmp instead (it would otherwise fail to bind, with a traceback on the audit's terminal)."""
    import tempfile

    from subguard.audit import zygote

    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    early = zygote.start()
    assert early is not None
    try:
        assert early.folder.startswith("/tmp/subguard-zygote-")
        assert len(os.fsencode(os.environ[zygote.ENV])) <= zygote.SOCKET_PATH_MAX
        deadline = time.monotonic() + 60
        while not os.path.exists(os.environ[zygote.ENV]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert os.path.exists(os.environ[zygote.ENV])  # bound: the zygote listens
    finally:
        early.close()
    assert early.proc.wait(timeout=60) == 0
