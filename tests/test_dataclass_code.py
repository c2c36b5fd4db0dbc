"""The code of the methods `dataclasses` generates, kept between runs (`subguard.cli.dataclass_code`):
a class made from kept code is made of the same code as without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from subguard.cli import dataclass_code
from tests.settle import settle

# every kind of method `dataclasses` generates, and what instances of them do
SHAPES = textwrap.dedent(
    """
    from __future__ import annotations
    import dataclasses
    from dataclasses import InitVar, dataclass, field
    from typing import ClassVar

    @dataclass(frozen=True)
    class Frozen:
        a: int
        b: str = "x"
        c: tuple[int, ...] = field(default_factory=tuple)

    @dataclass(order=True, unsafe_hash=True)
    class Ordered:
        a: int
        b: int = 0

    @dataclass(slots=True, kw_only=True)
    class Slotted:
        a: int
        b: list[int] = field(default_factory=list)

    @dataclass
    class Posted:
        a: int
        scale: InitVar[int] = 2
        kind: ClassVar[str] = "posted"
        double: int = field(init=False, default=0)

        def __post_init__(self, scale: int) -> None:
            self.double = self.a * scale

    @dataclass(frozen=True)
    class Child(Frozen):
        d: int = 4

    @dataclass(eq=False, repr=False)
    class Plain:
        a: int

    def behaviour() -> list[str]:
        out = [repr(Frozen(1)), repr(Child(1, "y", (2,), 5)), str(Frozen(1) == Frozen(1)), str(hash(Frozen(1)) == hash(Frozen(1)))]
        try:
            Frozen(1).a = 2
        except dataclasses.FrozenInstanceError as exc:
            out.append(f"frozen: {exc}")
        out += [str(sorted([Ordered(2), Ordered(1, 5)])), str(hash(Ordered(1)) == hash(Ordered(1)))]
        out += [repr(Slotted(a=1)), str(Posted(3).double), str(Posted(3, 5).double), str(Plain(1) == Plain(1))]
        return out
    """
)

# makes the classes (with the kept code or not), then prints a digest of every generated method's code
RUN = textwrap.dedent(
    """
    import dataclasses, hashlib, importlib, json, marshal, sys
    mode, names = sys.argv[1], sys.argv[2:]
    from subguard.cli import dataclass_code
    if mode != "plain":
        dataclass_code.install()
    modules = [importlib.import_module(name) for name in names]
    h = hashlib.sha256()
    classes = 0
    for module in modules:
        for value in sorted(vars(module).values(), key=lambda v: getattr(v, "__qualname__", "")):
            if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == module.__name__:
                classes += 1
                for name in sorted(value.__dict__):
                    fn = value.__dict__[name]
                    if callable(fn) and getattr(fn, "__code__", None) is not None and fn.__code__.co_filename == "<string>":
                        h.update(f"{value.__qualname__}.{name}".encode())
                        h.update(marshal.dumps(fn.__code__, 2))  # 2: without the strings' interning
    shapes = sys.modules.get("shapes")
    if mode == "save":
        dataclass_code.save()
    print(json.dumps({
        "code": h.hexdigest(), "classes": classes, "hits": dataclass_code.hits(),
        "behaviour": shapes.behaviour() if shapes else [],
    }))
    """
)


def _run(tmp_path: Path, mode: str, *modules: str) -> dict[str, object]:
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "xdg"),
        "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]),
    }
    proc = subprocess.run(
        [sys.executable, "-c", RUN, mode, *modules], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out: dict[str, object] = json.loads(proc.stdout)
    return out


@pytest.fixture
def shapes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    (tmp_path / "shapes.py").write_text(SHAPES)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return ("shapes", "subguard.extract.python.ir", "subguard.extract.python.resolve", "libcst._nodes.expression")


def test_classes_made_of_kept_code_are_made_of_the_same_code(tmp_path: Path, shapes: tuple[str, ...]) -> None:
    plain = _run(tmp_path, "plain", *shapes)
    assert not Path(dataclass_code.path()).exists()
    first = _run(tmp_path, "save", *shapes)  # compiles every method, and keeps it
    assert Path(dataclass_code.path()).is_file()
    kept = _run(tmp_path, "kept", *shapes)  # makes every method of the code kept
    assert isinstance(plain["classes"], int) and plain["classes"] > 100
    assert first["hits"] == 0 and isinstance(kept["hits"], int) and kept["hits"] >= 3 * plain["classes"]
    assert plain["code"] == first["code"] == kept["code"]
    assert plain["behaviour"] == first["behaviour"] == kept["behaviour"]
    assert "frozen: cannot assign to field 'a'" in plain["behaviour"]  # type: ignore[operator]


def test_a_file_not_signed_with_the_users_key_is_a_miss(tmp_path: Path, shapes: tuple[str, ...]) -> None:
    plain = _run(tmp_path, "plain", "shapes")
    Path(dataclass_code.path()).parent.mkdir(parents=True)
    Path(dataclass_code.path()).write_bytes(b"subguard-cache-v2\n" + b"\0" * 64 + b"planted")
    planted = _run(tmp_path, "save", "shapes")
    assert planted["hits"] == 0 and planted["code"] == plain["code"]
    kept = _run(tmp_path, "kept", "shapes")  # the planted file was replaced by a signed one
    assert isinstance(kept["hits"], int) and kept["hits"] > 0 and kept["code"] == plain["code"]


def test_a_console_check_keeps_libcsts_classes_for_the_child_that_parses_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    repo = tmp_path / "repo"
    repo.mkdir()
    consumer = (
        "from rocketmq.client import PushConsumer\nc = PushConsumer('GID_A')\nc.subscribe('orders', print, 'TagA')\n"
    )
    (repo / "consumer.py").write_text(consumer)
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("SUBGUARD_CACHE_DIR", None)

    def check() -> None:
        cmd = [sys.executable, "-m", "subguard", "check", ".", "--format", "json"]
        proc = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, timeout=120, env=env, check=False)
        assert proc.returncode == 0, proc.stderr[-3000:]
        settle(env)

    time.sleep(0.3)  # past the run memo's racy window: the run is recorded, the edit below is seen
    check()  # parses the file itself: libcst's classes are kept with the run's own, and noted so
    noted = dataclass_code._note("subguard.extract.python.parse")
    assert noted in dataclass_code._load(dataclass_code.path())
    kept = _run(tmp_path, "kept", "libcst")
    assert isinstance(kept["hits"], int) and kept["hits"] > 500  # every node class of libcst's tree
    # as after an interpreter upgrade: no file for this build, while the content cache holds the
    # file's parse (the run imports no libcst, and forks no child: nothing to keep for it)
    Path(dataclass_code.path()).unlink()
    check()
    assert noted not in dataclass_code._load(dataclass_code.path())
    time.sleep(0.3)
    (repo / "consumer.py").write_text(consumer.replace("TagA", "TagB"))
    time.sleep(0.3)
    check()  # the edited file is parsed by the child: the run's fork imports libcst to keep its classes
    assert noted in dataclass_code._load(dataclass_code.path())
    kept = _run(tmp_path, "kept", "libcst")
    assert isinstance(kept["hits"], int) and kept["hits"] > 500
