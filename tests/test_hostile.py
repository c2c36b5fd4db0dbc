"""Hostile and broken input: subguard never crashes, never hangs, never runs scanned code, and
accounts for every file."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree

import pytest

from subguard.report import FORMATS
from tests.report_json import all_findings
from tests.settle import settle

FIXTURE = Path(__file__).parent / "fixtures" / "hostile"
MARKER = Path("/tmp/subguard-pwned")


def build_hostile_repo(root: Path) -> Path:
    """The committed hostile files plus what git cannot store: FIFOs, devices, symlink tricks."""
    shutil.copytree(FIXTURE, root, symlinks=True)
    os.mkfifo(root / "app" / "fifo.py")
    (root / "app" / "loop_a.py").symlink_to("loop_b.py")
    (root / "app" / "loop_b.py").symlink_to("loop_a.py")
    (root / "app" / "escape.py").symlink_to("/etc/passwd")
    (root / "config" / "application-escape.yml").symlink_to("/etc/hostname")
    (root / "app" / "dangling.py").symlink_to("does-not-exist.py")
    (root / "linkdir").symlink_to(root / "app", target_is_directory=True)
    (root / "up").symlink_to("..", target_is_directory=True)
    try:
        os.mknod(root / "app" / "device.py", 0o600 | 0o020000, os.makedev(1, 3))  # like /dev/null
    except (PermissionError, OSError):
        pass
    return root


@pytest.fixture(scope="module")
def hostile_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_hostile_repo(tmp_path_factory.mktemp("hostile") / "repo")


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("SUBGUARD_DEBUG", None)
    proc = subprocess.run(
        [sys.executable, "-m", "subguard", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    settle(env)
    return proc


def _children_cpu() -> float:
    """User and system CPU seconds of the ended child processes of this one."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def discovered(root: Path) -> set[str]:
    """Every entry below root that is not a real folder (files, links, special files)."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".subguard_cache"]  # subguard's own cache, not input
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            if full.is_symlink() or not full.is_dir():
                out.add(full.relative_to(root).as_posix())
    return out


def test_fixture_has_enough_cases() -> None:
    assert sum(1 for p in FIXTURE.rglob("*") if p.is_file()) >= 25


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_check_survives_and_accounts_for_every_file(hostile_repo: Path, fmt: str) -> None:
    MARKER.unlink(missing_ok=True)
    start = _children_cpu()
    proc = _run("check", ".", "--format", fmt, "--stats", "--no-simulate", cwd=hostile_repo)
    spent = _children_cpu() - start  # CPU time: a loaded machine does not stretch it (a hang hits the timeout)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert spent < 10, f"took {spent:.1f} s of CPU"
    assert not MARKER.exists(), "scanned code was executed"
    if fmt == "json":
        findings = all_findings(proc.stdout)
        failed_paths = {f["path"] for f in findings if f["rule"] == "SG901"}
        for bad in (
            "app/syntax_error.py",
            "app/latin1.py",
            "config/application-tabs.yml",
            "src/main/java/com/x/Broken.java",
        ):
            assert bad in failed_paths, f"{bad} should be reported as unparseable"


def test_inventory_stats_account_for_every_file(hostile_repo: Path) -> None:
    proc = _run("inventory", ".", "--format", "json", "--stats", cwd=hostile_repo)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    rows = json.loads(proc.stdout)
    groups = {r["group"] for r in rows}
    assert {"hostile-good-group", "bom-group", "many-group"} <= groups
    first = proc.stderr.splitlines()[0]
    count = int(first.split()[1])
    assert count == len(discovered(hostile_repo)), first
    assert not MARKER.exists()


def test_scan_records_reasons(hostile_repo: Path) -> None:
    from subguard.core.config import load_config
    from subguard.scan.extraction import scan_repo

    config = load_config(None, hostile_repo)
    result = scan_repo(hostile_repo, config)
    by_path = {r.path: r for r in result.files}
    assert set(by_path) == discovered(hostile_repo)
    assert all(r.reason for r in result.files if r.status.value != "parsed")
    assert "symbolic link" in by_path["app/escape.py"].reason
    assert "symbolic link" in by_path["up"].reason
    assert "not a regular file" in by_path["app/fifo.py"].reason
    assert "size limit" in by_path["app/too_big.py"].reason
    assert by_path["app/binary.py"].status.value in ("failed", "skipped")
    assert by_path["app/empty.py"].status.value == "skipped"
    assert by_path["chart/templates/deployment.yaml"].status.value in ("skipped", "failed")
    for bad in ("config/application-laughs.yml", "config/application-deep.yml", "deploy/deep.yaml", "app/deep_expr.py"):
        assert by_path[bad].status.value in ("failed", "parsed"), by_path[bad]


# ---- regressions: one test per crash or hang found by the hostile fixtures and the fuzzers ----------


def test_regression_reasons_for_crashers(hostile_repo: Path) -> None:
    """Each of these crashed or hung a parser before its fix (see the report of issue 9)."""
    from subguard.core.config import load_config
    from subguard.scan.extraction import scan_repo

    result = scan_repo(hostile_repo, load_config(None, hostile_repo))
    by_path = {r.path: r for r in result.files}
    expect = {
        "app/deep_expr.py": "too many nested parentheses",  # libcst segfault (C stack overflow)
        "app/long_concat.py": "too deeply nested",  # libcst segfault on a 10,000-term concatenation
        "app/long_boolop.py": "too deeply nested",  # 20,000 `and` terms: flat for CPython, nested for libcst: segfault
        "app/long_then_error.py": "syntax error at line 3",  # CPython rejects -> libcst had the last word: segfault
        "config/application-laughs.yml": "aliases expand",  # spring: exponential flattening (hang)
        "config/application-deep.yml": "nested deeper than 100",  # RecursionError took down every spring file
        "config/application-badvalue.yml": "invalid YAML value",  # ValueError (2001-13-45) escaped the YAML reader
        "deploy/laughs.yaml": "aliases expand",
        "deploy/deep.yaml": "nested deeper than 100",
        "deploy/recursive-alias.yaml": "recursive alias",
    }
    for path, needle in expect.items():
        assert by_path[path].status.value == "failed", by_path[path]
        assert needle in (by_path[path].reason or ""), by_path[path]
    # tagged collections and merge keys lack positions in ruamel: a TypeError failed all spring files
    assert by_path["config/application-tagged.yml"].status.value == "parsed", by_path["config/application-tagged.yml"]
    assert not [r for r in result.files if "internal error" in (r.reason or "")]


def test_yaml_limits_are_fast_and_safe() -> None:
    from ruamel.yaml.error import YAMLError

    from subguard.core.yamlsafe import YAML_MAX_ALIAS_EXPANSION, safe_yaml

    laughs = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{c}: &{c} [{','.join([f'*{p}'] * 10)}]\n" for p, c in zip("abcdefg", "bcdefgh")
    )
    bombs = {
        "laughs": laughs,
        "flow": "a: " + "[" * 20000 + "]" * 20000 + "\n",
        "block": "- " * 5000 + "x\n",
        "recursive": "a: &a {b: *a}\n",
    }
    for name, text in bombs.items():
        for typ in ("safe", "rt"):
            start = time.process_time()  # CPU time: a loaded machine does not stretch it
            with pytest.raises(YAMLError):
                list(safe_yaml(typ).load_all(text))
            assert time.process_time() - start < 3.0, (name, typ)  # unlimited, the laughs expand to 10**8 items
    shared = "a: &a [" + ",".join(["x"] * 100) + "]\nb: [" + ",".join(["*a"] * 50) + "]\n"  # 5,000 extra: fine
    assert len(next(iter(safe_yaml("rt").load_all(shared)))["b"]) == 50 and YAML_MAX_ALIAS_EXPANSION > 5000
    with pytest.raises(YAMLError):
        safe_yaml("safe").load("!!python/object/apply:os.system ['touch /tmp/subguard-pwned']\n")
    data = safe_yaml("rt").load("a: !!python/object/apply:os.system ['touch /tmp/subguard-pwned']\n")
    assert list(data["a"]) == ["touch /tmp/subguard-pwned"] and not MARKER.exists()


def test_time_budget_interrupts_and_restores() -> None:
    import signal
    import threading

    from subguard.core.limits import ParseTimeout, can_time_out, time_budget

    assert can_time_out()
    start = time.monotonic()
    with pytest.raises(ParseTimeout), time_budget(0.2):
        while True:
            pass
    assert time.monotonic() - start < 2
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    with time_budget(0.5), time_budget(0.01):  # nested: the outer budget governs
        time.sleep(0.05)
    seen: list[bool] = []
    worker = threading.Thread(target=lambda: seen.append(can_time_out()))
    worker.start()
    worker.join()
    assert seen == [False]  # off the main thread the budget is not enforced (documented)


def test_time_budget_survives_an_alarm_swallowed_by_a_finaliser() -> None:
    """An exception raised inside `__del__` is printed and dropped; the budget must fire again."""
    from subguard.core.limits import ParseTimeout, time_budget

    class Slow:
        def __del__(self) -> None:  # spans the moment the budget is spent
            while time.monotonic() - start < 0.3:
                pass

    swallowed: list[object] = []
    hook, sys.unraisablehook = sys.unraisablehook, swallowed.append
    start = time.monotonic()
    try:
        with pytest.raises(ParseTimeout), time_budget(0.1):
            Slow()  # collected at once: the first alarm lands in __del__ and is dropped
            while time.monotonic() - start < 5:
                pass
    finally:
        sys.unraisablehook = hook
    assert time.monotonic() - start < 2
    assert swallowed, "the first alarm should have landed in __del__ at least once in this test"


def test_slow_file_fails_on_its_time_budget_alone(tmp_path: Path) -> None:
    """The pure-Python YAML scanner is quadratic in flow depth: such a file fails on `parse-timeout`."""
    from subguard.core.config import Config
    from subguard.scan.extraction import scan_repo

    slow = "[" + ",".join(["[" * 90 + "]" * 90] * 300) + "]\n"  # ~5 s unbounded on an idle core
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "slow.yaml").write_text("kind: Deployment\nspec:\n  x: " + slow)
    (tmp_path / "application-slow.yml").write_text("rocketmq:\n  consumer:\n    group: " + slow)
    (tmp_path / "application.yml").write_text(
        "rocketmq:\n  name-server: a:9876\n  pull-consumer:\n    group: fine-group\n    topic: T\n"
    )
    config = Config.model_validate({"parse-timeout": 0.5})
    start = time.monotonic()
    result = scan_repo(tmp_path, config)
    assert time.monotonic() - start < 4
    by_path = {r.path: r for r in result.files}
    for path in ("deploy/slow.yaml", "application-slow.yml"):
        assert by_path[path].status.value == "failed" and "time budget" in (by_path[path].reason or ""), by_path[path]
    assert by_path["application.yml"].status.value == "parsed"
    assert {c.group.value for c in result.consumers} == {"fine-group"}


class _Fragile:
    """A real extractor (not a mock) with two bugs: one file crashes its parse, one its linking."""

    name = "fragile"
    needles: tuple[bytes, ...] = ()

    def claims(self, path: str) -> bool:
        return path.endswith(".frag")

    def extract(self, files, repo):  # type: ignore[no-untyped-def]
        from subguard.core.model import FileRecord, FileStatus
        from subguard.extract.base import ExtractResult

        def parse(data: bytes) -> str:
            if data == b"recurse":
                return parse(data)
            return data.decode()

        texts = {f.path: repo.memo(self.name, f.path, f.data, lambda f=f: parse(f.data)) for f in files}
        if "boom" in texts.values():
            raise KeyError("boom")
        return ExtractResult(files=tuple(FileRecord(path=p, status=FileStatus.PARSED) for p in texts))


def test_extractor_failure_is_isolated_to_its_file() -> None:
    from subguard.core.config import Config
    from subguard.scan.discover import Candidate
    from subguard.scan.extraction import scan_files

    files = {"a.frag": b"fine", "b.frag": b"recurse", "c.frag": b"boom", "d.frag": b"also fine"}
    cands = [Candidate(p, "/nonexistent/" + p, len(d), data=d) for p, d in files.items()]
    result = scan_files("/nonexistent", "r", cands, (), Config(), extractors=[_Fragile()])
    by_path = {r.path: r for r in result.files}
    assert set(by_path) == set(files)
    assert by_path["a.frag"].status.value == by_path["d.frag"].status.value == "parsed"
    assert "recursion limit" in (by_path["b.frag"].reason or "")
    assert "internal error in the fragile extractor: KeyError" in (by_path["c.frag"].reason or "")


def test_hostile_values_cannot_break_or_forge_output(tmp_path: Path) -> None:
    """Lone surrogates crashed every format (exit 2); a newline in a group name forged output lines."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "c.py").write_text(
        "from rocketmq.client import PushConsumer\n"
        "c = PushConsumer('g\\ud800\\n::error file=evil::pwned\\x1b[31m')\nc.subscribe('T', print, expression='a')\n"
        "d = PushConsumer('g\\ud800\\n::error file=evil::pwned\\x1b[31m')\nd.subscribe('T', print, expression='b')\n"
    )
    (tmp_path / "application.yml").write_text('rocketmq:\n  consumer:\n    group: "y\\ud800\\e[2J"\n    topic: T\n')
    for fmt in sorted(FORMATS):
        proc = _run("check", ".", "--format", fmt, "--no-simulate", "--no-cache", cwd=tmp_path)
        assert proc.returncode == 1, (fmt, proc.stderr)
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
        assert not any(line.startswith("::error file=evil") for line in proc.stdout.splitlines()), fmt
        assert "\x1b[2J" not in proc.stdout and "\x1b[31m" not in proc.stdout
        if fmt in ("json", "sarif", "gitlab"):
            json.loads(proc.stdout)
        if fmt == "junit":
            ElementTree.fromstring(proc.stdout)
    proc = _run("inventory", ".", "--format", "jsonl", cwd=tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr


def test_scrub_finds_a_surrogate_anywhere_and_keeps_clean_values_as_they_are() -> None:
    """`scrub` decides with pydantic's JSON writer first: a surrogate in a nested model, a tuple, a
    dict key or a subclass's own field must still be found, and a clean value comes back unchanged."""
    from pydantic import BaseModel

    from subguard.core.limits import scrub
    from subguard.core.model import Location, Value

    class Holder(BaseModel):
        base: BaseModel
        table: dict[str, int]
        raw: bytes = b""

    clean = (Value(value="g", location=Location(path="a.py", span=(1, 2))),)
    assert scrub(clean) is clean
    hidden = (Value(value="g", location=Location(path="a\ud800.py")),)
    assert scrub(hidden)[0].location == Location(path="a\ufffd.py")
    keyed = Holder(base=Location(path="a.py"), table={"k\udc80": 1})
    assert scrub(keyed).table == {"k\ufffd": 1}
    # a field declared as a base class: written as the subclass it holds, its own fields included
    assert scrub(Holder(base=Location(path="x\ud800"), table={})).base == Location(path="x\ufffd")
    undecodable = Holder(base=Location(path="a"), table={}, raw=b"\xff")  # no JSON for it: pickled instead
    assert scrub(undecodable) is undecodable

    # a sequence of one model class is written by its declared fields only while no declared model
    # class has a subclass: a subclass's own field must still be looked at
    class Base(BaseModel):
        x: str

    class Sub(Base):
        y: str

    class Box(BaseModel):
        item: Base

    boxes = (Box(item=Sub(x="a", y="b\ud800")), Box(item=Base(x="c")))
    assert scrub(boxes)[0].item == Sub(x="a", y="b\ufffd")
