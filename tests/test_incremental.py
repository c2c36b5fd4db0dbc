"""An incremental run (the content cache and per-extractor reuse, issue 20) gives what a cold run gives.

A generated repository (Python consumers reading shared constants, a factory and its callers, Java,
Spring YAML, a Kubernetes manifest) is edited at random, file by file on disk; after each edit the
real console entry runs in a subprocess with its caches, and again with `--no-cache`: the two JSON
reports must be byte-identical. Edits: add or remove a consumer, change a constant other files use,
rename a group, add or delete a file, break a file's syntax and fix it, call a factory again (from a
new file or from one that did not call it).
"""

from __future__ import annotations

import io
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

import subguard.cli.resident.warm  # noqa: F401 - as the server: registers the run memo's kept kind
from subguard.core import cache, kept, signing
from subguard.scan import passedover, runmemo, watch
from tests.settle import settle

CONSTANTS = '''"""Names shared by the consumers."""
GROUP_A = "{group_a}"
GROUP_B = "GID_B"
TOPIC = "{topic}"
TAGS = "{tags}"
'''

CONSUMER = """from rocketmq.client import PushConsumer

from common.names import GROUP_A, TAGS, TOPIC


def handle(msg):
    return None


c{n} = PushConsumer({group})
c{n}.set_name_server_address("ns:9876")
c{n}.subscribe(TOPIC, handle, expression={expr})
c{n}.start()
"""

FACTORY = """from rocketmq.client import PushConsumer


def make(group, tags="*"):
    consumer = PushConsumer(group)
    consumer.subscribe("TopicFactory", None, expression=tags)
    return consumer
"""

CALLER = """from common.factory import make

first = make("{group}", "{tags}")
"""

FIXTURE = """import pytest
from rocketmq.client import PushConsumer


@pytest.fixture
def orders_consumer():
    consumer = PushConsumer("GID_FIXTURE")
    consumer.subscribe("TopicFixture", None, expression="{tags}")
    return consumer
"""

FIXTURE_USER = """def test_{n}(orders_consumer):
    orders_consumer.start()
"""

REGISTER = """def register(consumer, topic, tags="{tags}"):
    consumer.subscribe(topic, None, expression=tags)
"""

REGISTERED = """from rocketmq.client import PushConsumer

from common.names import TOPIC
from common.register import register

registered = PushConsumer("GID_REGISTERED")
register(registered, TOPIC{tags})
registered.start()
"""

WAIVER = "# SubGuard: ignore[SG101] reviewed\n"  # the needle in another case: matched as the waivers are

REQUIREMENTS = ["rocketmq-client-python==2.0.0\n", "rocketmq==0.4.4\n", "requests\n"]

JAVA = """package demo;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;

public class Listener{n} {{
    public void start() throws Exception {{
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("{group}");
        consumer.subscribe("TopicJava", "{tags}");
        consumer.start();
    }}
}}
"""

SPRING = """rocketmq:
  name-server: ns:9876
  consumer:
    group: {group}
    topic: TopicSpring
"""

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc
spec:
  replicas: {replicas}
  template:
    spec:
      containers:
        - name: app
          image: svc:1
"""

PLAIN = '''"""Ordinary code of the service: no RocketMQ here."""


def limit_{n}(values):
    return [v for v in values if v < {n}]
'''

GROUPS = ["GID_A", "GID_B", "GID_C", "GID_SHARED"]
TAGS = ["TagA", "TagA || TagB", "TagB", "*"]


def make_repo(root: Path) -> None:
    files = {
        "common/__init__.py": "",
        "common/names.py": CONSTANTS.format(group_a="GID_A", topic="TopicOrders", tags="TagA"),
        "common/factory.py": FACTORY,
        "svc1/callers.py": CALLER.format(group="GID_F", tags="TagA"),
        "svc2/callers.py": CALLER.format(group="GID_F", tags="TagB"),
        "svc1/requirements.txt": REQUIREMENTS[0],
        "tests/conftest.py": FIXTURE.format(tags="TagA"),
        "tests/test_orders.py": FIXTURE_USER.format(n=1),
        "common/register.py": REGISTER.format(tags="*"),
        "svc2/registered.py": REGISTERED.format(tags=""),
        "deploy/svc.yaml": DEPLOY.format(replicas=2),
        "java/src/main/resources/application.yml": SPRING.format(group="GID_SPRING"),
        "java/src/main/java/demo/Listener1.java": JAVA.format(n=1, group="GID_JAVA", tags="TagA"),
        "java/src/main/java/demo/Listener2.java": JAVA.format(n=2, group="GID_JAVA", tags="TagB"),
        "docs/readme.md": "nothing here\n",
        "svc1/util.py": PLAIN.format(n=1),
        "svc2/helpers.py": PLAIN.format(n=2),
    }
    for n in range(1, 7):
        group = "GROUP_A" if n % 2 else f'"{GROUPS[n % len(GROUPS)]}"'
        files[f"svc{n % 3}/consumer_{n}.py"] = CONSUMER.format(n=n, group=group, expr="TAGS" if n % 3 else '"TagB"')
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


class Editor:
    """Random edits of the generated repository; every write gets a new, later mtime (the cache,
    like the tools it stands beside, trusts size and mtime: two edits in one timestamp tick are out
    of scope)."""

    def __init__(self, root: Path, seed: int) -> None:
        self.root = root
        self.rng = random.Random(seed)
        self.clock = 1_700_000_000_000_000_000
        self.broken: Path | None = None
        self.saved = ""
        self.counter = 100
        self.before: tuple[Path, str] | None = None  # a file's content before the last write, for `undo`

    def write(self, path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.before = (path, path.read_text(encoding="utf-8")) if path.is_file() else None
        path.write_text(text, encoding="utf-8")
        self.clock += 1_000_000_000
        os.utime(path, ns=(self.clock, self.clock))

    def files(self, pattern: str) -> list[Path]:
        return sorted(p for p in self.root.rglob(pattern) if not {".subguard_cache", ".git"} & set(p.parts))

    def edit(self) -> str:
        if self.broken is not None:  # a broken file is fixed by the next edit
            path, self.broken = self.broken, None
            self.write(path, self.saved)
            return f"fix {path.name}"
        ops: list[Callable[[], str]] = [
            self.add_consumer,
            self.remove_consumer,
            self.change_constant,
            self.rename_group,
            self.delete_file,
            self.break_file,
            self.add_caller,
            self.call_factory_here,
            self.edit_java,
            self.edit_spring,
            self.edit_manifest,
            self.touch,
            self.edit_plain,
            self.edit_link,
            self.comment,
            self.undo,
        ]
        return self.rng.choice(ops)()

    def comment(self) -> str:
        """A comment after a consumer file's last line, new bytes with the same parse (the run memo
        replays once the parse made ahead confirms it, `subguard.scan.runmemo.confirm`); now and then
        an inline waiver, which no parse keeps."""
        path = self.rng.choice(self.files("consumer_*.py") or self.files("*.py"))
        self.counter += 1
        line = self.rng.choice([f"# reviewed {self.counter}\n", "# subguard: ignore[SG102] a waiver\n"])
        self.write(path, path.read_text(encoding="utf-8") + line)
        return f"comment {path.name}"

    def undo(self) -> str:
        """The last write taken back: bytes a recent run parsed (an undo, pre-commit's stash)."""
        if self.before is None:
            return self.touch()
        path, text = self.before
        self.write(path, text)
        return f"undo {path.name}"

    def edit_link(self) -> str:
        """An edit of what links a consumer beyond its own module (a fixture, a test taking it, a
        function it is passed to, the requirements), or of an inline waiver."""
        ops = [self.edit_fixture, self.use_fixture, self.edit_register, self.edit_requirements, self.waive]
        if self.rng.random() < 0.2:  # drawn apart: the other edits keep their odds
            return self.shadow(self.rng.randrange(3))
        return self.rng.choice(ops)()

    def shadow(self, n: int) -> str:
        """`svc{n}/common/names.py` added (the `common.names` that svc{n}'s imports resolve to, as the
        closer module) or removed again: what an import resolves to changes with the path set."""
        package = self.root / f"svc{n}" / "common"
        if package.exists():
            for path in sorted(package.iterdir()):
                path.unlink()
            package.rmdir()
            return f"unshadow common.names in svc{n}"
        self.write(package / "__init__.py", "")
        self.write(package / "names.py", CONSTANTS.format(group_a="GID_SHADOW", topic="TopicShadow", tags="TagS"))
        return f"shadow common.names in svc{n}"

    def waive(self) -> str:
        """An inline waiver written into a Python file, or taken out again (the scan's search for
        the waivers' needle answers unchanged files from the verdicts it keeps)."""
        path = self.rng.choice(self.files("*.py"))
        text = path.read_text(encoding="utf-8")
        if WAIVER in text:
            self.write(path, text.replace(WAIVER, ""))
            return f"unwaive {path.name}"
        lines = text.splitlines(keepends=True)
        at = next((i for i, line in enumerate(lines) if ".subscribe(" in line), len(lines))  # it waives that line
        self.write(path, "".join([*lines[:at], WAIVER, *lines[at:]]))
        return f"waive in {path.name}"

    def add_consumer(self) -> str:
        self.counter += 1
        n = self.counter
        group = self.rng.choice(["GROUP_A", *(f'"{g}"' for g in GROUPS)])
        expr = self.rng.choice(["TAGS", *(f'"{t}"' for t in TAGS)])
        path = self.root / f"svc{self.rng.randrange(3)}" / f"consumer_{n}.py"
        self.write(path, CONSUMER.format(n=n, group=group, expr=expr))
        return f"add {path.name}"

    def remove_consumer(self) -> str:
        consumers = self.files("consumer_*.py")
        if not consumers:
            return self.add_consumer()
        path = self.rng.choice(consumers)
        text = path.read_text(encoding="utf-8")
        keep = "\n".join(
            line for line in text.splitlines() if "PushConsumer(" not in line and ".subscribe(" not in line
        )
        self.write(path, keep + "\n")
        return f"remove the consumer of {path.name}"

    def change_constant(self) -> str:
        text = CONSTANTS.format(
            group_a=self.rng.choice(GROUPS),
            topic=self.rng.choice(["TopicOrders", "TopicPay"]),
            tags=self.rng.choice(TAGS),
        )
        self.write(self.root / "common" / "names.py", text)
        return "change common/names.py"

    def rename_group(self) -> str:
        consumers = self.files("*.py")
        path = self.rng.choice(consumers)
        text = path.read_text(encoding="utf-8")
        old, new = self.rng.sample(GROUPS, 2)
        self.write(path, text.replace(old, new) if old in text else text.replace("GROUP_A", f'"{new}"', 1))
        return f"rename a group in {path.name}"

    def delete_file(self) -> str:
        victims = [p for p in self.files("*") if p.is_file() and p.name not in ("names.py", "__init__.py")]
        if len(victims) < 6:
            return self.add_consumer()
        path = self.rng.choice(victims)
        path.unlink()
        return f"delete {path.relative_to(self.root)}"

    def break_file(self) -> str:
        path = self.rng.choice(self.files("*.py") + self.files("*.java"))
        self.saved = path.read_text(encoding="utf-8")
        self.broken = path
        self.write(path, self.saved + "\ndef broken(:\n" if path.suffix == ".py" else self.saved + "\nclass {\n")
        return f"break {path.name}"

    def add_caller(self) -> str:
        self.counter += 1
        path = self.root / f"svc{self.rng.randrange(3)}" / f"caller_{self.counter}.py"
        self.write(path, CALLER.format(group=self.rng.choice(GROUPS), tags=self.rng.choice(TAGS)))
        return f"add {path.name}"

    def call_factory_here(self) -> str:
        """A file that did not call the factory now does (or calls it once more): the factory's
        callers are found by a search whose per-file verdicts the cache keeps."""
        files = [p for p in self.files("*.py") if p.name != "factory.py"]
        # a consumer's own file is read in full anyway: a file found only by the search matters
        plain = [p for p in files if not _words(p.read_text(encoding="utf-8"))]
        path = self.rng.choice(plain or files)
        call = CALLER.format(group=self.rng.choice(GROUPS), tags=self.rng.choice(TAGS)).replace("first", "again")
        self.write(path, path.read_text(encoding="utf-8") + "\n" + call)
        return f"call the factory from {path.name}"

    def edit_java(self) -> str:
        path = self.root / "java/src/main/java/demo" / f"Listener{self.rng.randrange(1, 4)}.java"
        self.write(
            path, JAVA.format(n=path.stem[-1], group=self.rng.choice(["GID_JAVA", *GROUPS]), tags=self.rng.choice(TAGS))
        )
        return f"edit {path.name}"

    def edit_spring(self) -> str:
        self.write(
            self.root / "java/src/main/resources/application.yml",
            SPRING.format(group=self.rng.choice(["GID_SPRING", *GROUPS])),
        )
        return "edit application.yml"

    def edit_manifest(self) -> str:
        self.write(self.root / "deploy/svc.yaml", DEPLOY.format(replicas=self.rng.randrange(1, 4)))
        return "edit deploy/svc.yaml"

    def touch(self) -> str:
        path = self.rng.choice(self.files("*.py"))
        self.write(path, path.read_text(encoding="utf-8") + "\n")
        return f"append a blank line to {path.name}"

    def edit_plain(self) -> str:
        """Ordinary code changes (the run memo replays a run after such edits, `subguard.scan.unread`);
        now and then the edit names RocketMQ, imports the shared names or calls the factory."""
        path = self.rng.choice([self.root / "svc1/util.py", self.root / "svc2/helpers.py"])
        text = PLAIN.format(n=self.rng.randrange(100)) + self.rng.choice(
            ["", "", "", "# rocketmq: not yet\n", "from common.names import TOPIC\n", 'make("GID_A")\n']
        )
        self.write(path, text)
        return f"edit {path.name}"

    def edit_fixture(self) -> str:
        self.write(self.root / "tests/conftest.py", FIXTURE.format(tags=self.rng.choice(TAGS)))
        return "edit the fixture in tests/conftest.py"

    def use_fixture(self) -> str:
        """A test takes the fixture (one consumer per test that takes it), or no longer does."""
        self.counter += 1
        path = self.root / "tests" / self.rng.choice(["test_orders.py", f"test_more_{self.counter}.py"])
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if "orders_consumer" in text and self.rng.random() < 0.3:
            self.write(path, text.replace("(orders_consumer)", "()"))
            return f"stop using the fixture in {path.name}"
        self.write(path, text + "\n\n" + FIXTURE_USER.format(n=self.counter))
        return f"use the fixture in {path.name}"

    def edit_register(self) -> str:
        """The function a consumer is passed to subscribes it: its default, or the call's argument."""
        if self.rng.random() < 0.5:
            self.write(self.root / "common/register.py", REGISTER.format(tags=self.rng.choice(TAGS)))
            return "edit common/register.py"
        tags = self.rng.choice(["", *(f', "{t}"' for t in TAGS)])
        self.write(self.root / "svc2/registered.py", REGISTERED.format(tags=tags))
        return "edit svc2/registered.py"

    def edit_requirements(self) -> str:
        """Which 4.x package the repo declares decides the client of a consumer that does not say."""
        self.write(self.root / "svc1/requirements.txt", self.rng.choice(REQUIREMENTS))
        return "edit svc1/requirements.txt"


def _words(text: str) -> set[str]:
    return {w for w in ("make(", "Consumer(") if w in text}


def _env(root: Path) -> dict[str, str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(root.parent / "xdg"), "NO_COLOR": "1"}
    env.pop("SUBGUARD_CACHE_DIR", None)  # the default: <root>/.subguard_cache
    return env


def _check(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = _env(root)
    cmd = [sys.executable, "-m", "subguard", "check", ".", "--format", "json", "--fail-on", "none", *args]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=300, env=env, check=False)
    settle(env)
    return proc


def _run_sequence(tmp_path: Path, seed: int, edits: int) -> None:
    root = tmp_path / "repo"
    make_repo(root)
    first = _check(root)
    assert first.returncode == 0, first.stderr
    editor = Editor(root, seed)
    done: list[str] = []
    for _ in range(edits):
        done.append(editor.edit())
        warm, cold = _check(root), _check(root, "--no-cache")
        assert warm.returncode == cold.returncode == 0, (done, warm.stderr, cold.stderr)
        assert warm.stdout == cold.stdout, f"after {done}"
        assert "warning" not in warm.stderr, warm.stderr


def test_incremental_equals_cold_over_random_edits(tmp_path: Path) -> None:
    _run_sequence(tmp_path, seed=20, edits=12)


@pytest.mark.slow
def test_incremental_equals_cold_over_more_random_edits(tmp_path: Path) -> None:
    # 10 edits of another seed (plus the 12 above; the 200 of the in-process test below): each edit is
    # two real CLI runs, 2.5-6 s a pair on 2 cores, and the whole suite must stay under 15 minutes there
    _run_sequence(tmp_path, seed=1, edits=10)


def _check_here(root: Path, out: Path, *args: str) -> str:
    """One `subguard check` through the console entry in this process (run memo, content cache and
    per-extractor reuse as a real run has them): the JSON report it writes."""
    from subguard.cli.entry import run

    argv = ["check", ".", "--format", "json", "--fail-on", "none", "--output", str(out), *args]
    streams = [io.TextIOWrapper(io.BytesIO(), encoding="utf-8") for _ in range(2)]  # click wants an encoding
    with redirect_stdout(streams[0]), redirect_stderr(streams[1]):
        code = run(argv)
    streams[1].seek(0)
    err = streams[1].read()
    assert code == 0, err
    assert "subguard: warning" not in err, err
    return out.read_text(encoding="utf-8")


@pytest.mark.parametrize(("seed", "served"), [(200, False), (201, True)])
def test_incremental_equals_cold_over_200_random_edits_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, served: bool
) -> None:
    """The same random edits as above, 100 per seed, each followed by a cached and a `--no-cache` run in
    this process (a subprocess pair costs ~2 s; these ~0.1 s of CPU): the reports are byte-identical.
    With `served`, the cache files each cached run loaded are then kept, and the trees it walked
    watched, as a resident server keeps and watches them (`subguard.core.kept`,
    `subguard.scan.watch`), and the next cached run is given them."""
    kept.forget()
    watch.forget()
    kept.serve(served)  # what only a served run uses is written, and taken (`subguard.scan.passedover`)
    walked = 0  # served runs that walked a tree (no watched walk answered)
    given: list[object] = []
    take = kept.take
    monkeypatch.setattr(kept, "take", lambda *a: given.append(take(*a)) or given[-1])
    passes: list[object] = []  # the passes over a run's candidates the server made ahead, found by the run
    pass_over = passedover.Memo.pass_over
    monkeypatch.setattr(passedover.Memo, "pass_over", lambda *a: passes.append(pass_over(*a)) or passes[-1])
    searched: list[object] = []  # the search verdicts the server found valid ahead, found by a run's search
    made_ahead = cache.ContentCache.ahead
    monkeypatch.setattr(cache.ContentCache, "ahead", lambda *a: searched.append(made_ahead(*a)) or searched[-1])
    held: list[object] = []  # an extractor's last result as the server unpickled it, found by the run's `ran`
    held_ahead = cache.ContentCache.held
    monkeypatch.setattr(cache.ContentCache, "held", lambda *a: held.append(held_ahead(*a)) or held[-1])
    root = tmp_path / "repo"
    make_repo(root)
    monkeypatch.chdir(root)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("SUBGUARD_CACHE_DIR", raising=False)
    out = tmp_path / "out.json"  # outside the scanned tree
    _check_here(root, out)
    # every write moves its file's mtime by a second (`Editor`): no edit can hide in a timestamp tick,
    # so each warm run is memoised however soon after the edit it runs
    monkeypatch.setattr(runmemo, "RACY_NS", 0)
    trusted: list[bool] = []  # whether a run after edits of files no extractor saw was replayed
    only_unread = runmemo._only_unread_edits
    monkeypatch.setattr(runmemo, "_only_unread_edits", lambda *a: trusted.append(only_unread(*a)) or trusted[-1])
    confirmed: list[int | None] = []  # the code of each run replayed once a parse ahead confirmed it, else None
    confirm = runmemo.confirm
    monkeypatch.setattr(runmemo, "confirm", lambda *a: confirmed.append(code := confirm(*a)) or code)
    editor = Editor(root, seed)
    done: list[str] = []
    kinds: set[str] = set()
    for n in range(100):
        done.append(editor.edit())
        kinds.add(done[-1].split()[0])
        # the simulator is most of a cold run here: every tenth pair simulates (the impact memo is reused)
        args = () if n % 10 == 0 else ("--no-simulate",)
        if served:
            watch.refresh()  # as the server does before it forks a run
        warm = _check_here(root, out, *args)
        if served:
            kept.warm(kept.drain(), signing.stored_key)
            wanted = watch.wanted()
            walked += any(kind == "root" for kind, _, _ in wanted)  # the cache folder is walked after each run wrote it
            assert all(watch.start(key) for key in wanted)
        # a user cache of its own: what a cold run writes there (the simulator's memo) must not
        # change the inputs the warm runs' memo checks
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cold"))
        cold = _check_here(root, out, *args, "--no-cache")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert warm == cold, f"after {done[-8:]} ({len(done)} edits)"
    assert {"add", "remove", "change", "rename", "delete", "break", "fix"} <= kinds, kinds
    assert True in trusted and False in trusted, trusted  # both answers were given, and held
    assert None in confirmed and any(c is not None for c in confirmed), confirmed  # and both after a parse ahead
    kept.forget()
    watch.forget()
    kept.serve(False)
    kept_states = [g for g in given if isinstance(g, cache.LoadedState)]
    assert (len(kept_states) > 50) == served, len(kept_states)  # most cached runs were given the kept state
    passed = [g for g in given if isinstance(g, passedover.Memo) and g.records]
    assert (len(passed) > 50) == served, len(passed)  # and the records of the files their prefilter passed over
    ahead = [p for p in passes if p is not None]
    assert (len(ahead) > 50) == served, len(ahead)  # with the pass over them, made ahead of the run
    verdicts = [v for v in searched if v is not None]
    # and the factories' search verdicts, found valid ahead, by most searches
    assert (len(verdicts) * 2 > len(searched) > 0) == served, (len(verdicts), len(searched))
    unpickled = [h for h in held if h is not None]
    assert (len(unpickled) > 50) == served, (len(unpickled), len(held))  # compared, not pickled again
    entries = [g for g in given if isinstance(g, dict) and g.get("version") == runmemo.FORMAT]
    assert (len(entries) > 50) == served, len(entries)  # and the run memo's entries
    assert walked < 10 if served else walked == 0, walked  # the others stamped their trees from the watched walks


def test_a_python_edit_loads_no_other_extractor(tmp_path: Path) -> None:
    """After one Python file changed, the run imports neither the Java, Spring, build nor manifest
    extractors (their last results are reused), nor tree-sitter or YAML parsers for them, nor a
    process pool (one file to parse)."""
    root = tmp_path / "repo"
    make_repo(root)
    assert _check(root).returncode == 0
    Editor(root, 0).touch()
    env = _env(root)
    out = tmp_path / "out.json"  # outside the scanned tree: a new file there would be a new path
    code = (  # the console entry's run (its `main` ends the process without returning)
        "import sys\nfrom subguard.cli.entry import run\n"
        f"run(['check', '.', '--format', 'json', '--output', {str(out)!r}])\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300, env=env, check=False
    )
    loaded = set(proc.stderr.split())
    assert "subguard.extract.python.extractor" in loaded, proc.stderr[-2000:]
    unwanted = {
        "subguard.extract.java.extractor",
        "subguard.extract.spring.extractor",
        "subguard.extract.build",
        "subguard.extract.manifests.extractor",
        "tree_sitter",
        "ruamel.yaml",
        "subguard.audit",
        "pyspark",
        "subguard.extract.java.linkmemo",  # the Java linker's kept steps stay pickled
        "multiprocessing",  # no pool: one file to parse
        "concurrent.futures.process",
    }
    assert not loaded & unwanted, loaded & unwanted


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@e"
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def _run_base_sequence(tmp_path: Path, seed: int, edits: int) -> None:
    """`check --base HEAD` after each random edit (the work tree is the head; now and then the
    edits are committed, so the base moves): with its caches (the base's unchanged files and
    extractors served from the head's cache) it must print what a `--no-cache` run prints."""
    root = tmp_path / "repo"
    make_repo(root)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    assert _check(root, "--base", "HEAD").returncode == 0
    editor = Editor(root, seed)
    commits = random.Random(seed + 1)
    done: list[str] = []
    for _ in range(edits):
        done.append(editor.edit())
        if commits.random() < 0.2:
            _git(root, "add", "-A")
            _git(root, "commit", "-qm", "edit", "--allow-empty")
            done.append("commit")
        warm, cold = _check(root, "--base", "HEAD"), _check(root, "--base", "HEAD", "--no-cache")
        assert warm.returncode == cold.returncode == 0, (done, warm.stderr, cold.stderr)
        assert warm.stdout == cold.stdout, f"after {done}"
        assert "warning" not in warm.stderr, warm.stderr


def test_base_run_equals_cold_over_random_edits(tmp_path: Path) -> None:
    _run_base_sequence(tmp_path, seed=26, edits=10)


@pytest.mark.parametrize("seed", [5, 6])
def test_base_scan_equals_cold_over_random_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """The records themselves (JSON shows findings only, and few edits make an SG6xx finding show
    the base's): after every random edit, the head scanned with its cache equals the head scanned
    without, and the base scanned from the head's cache (its result per tree dropped first, so the
    base is extracted every time) equals the base scanned with no cache."""
    from subguard.core.config import Config
    from subguard.scan import gitrev
    from subguard.scan.extraction import open_cache, scan_repo

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("SUBGUARD_CACHE_DIR", raising=False)
    root = tmp_path / "repo"
    make_repo(root)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    config = Config()
    editor = Editor(root, seed)
    commits = random.Random(seed + 1)
    done: list[str] = []
    for _ in range(30):
        done.append(editor.edit())
        if commits.random() < 0.15:
            _git(root, "add", "-A")
            _git(root, "commit", "-qm", "edit", "--allow-empty")
            done.append("commit")
        rev = gitrev.resolve(root, "HEAD")
        open_cache(root.resolve(), config, "k\x1fbase").result_file.unlink(missing_ok=True)
        head, cold_head = scan_repo(root, config, cache_key="k"), scan_repo(root, config)
        assert head == cold_head, f"head after {done}"  # every record, JSON shows findings only
        warm = gitrev.scan_base([str(root)], [rev], [head], config, "k")[0]
        cold = gitrev.scan_base([str(root)], [rev], [cold_head], config, None)[0]
        assert (warm.consumers, warm.deployments, warm.findings) == (cold.consumers, cold.deployments, cold.findings), (
            f"base after {done}"
        )


def test_a_scan_digest_follows_the_records_not_the_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`ScanResult.digest` (what keys the reused judgement, `subguard.rules.evalmemo`): the same after
    an edit that changes no record (a blank line), another after one that does (a constant other files
    read), and none without a cache."""
    from subguard.core.config import Config
    from subguard.scan.extraction import scan_repo

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("SUBGUARD_CACHE_DIR", raising=False)
    root = tmp_path / "repo"
    make_repo(root)
    config = Config()
    first = scan_repo(root, config, cache_key="k")
    assert first.digest and not scan_repo(root, config).digest
    editor = Editor(root, 0)
    path = root / "svc1" / "consumer_1.py"
    editor.write(path, path.read_text(encoding="utf-8") + "\n")
    blank = scan_repo(root, config, cache_key="k")
    assert blank.digest == first.digest and blank.consumers == first.consumers
    editor.write(root / "common" / "names.py", CONSTANTS.format(group_a="GID_C", topic="TopicPay", tags="TagB"))
    changed = scan_repo(root, config, cache_key="k")
    assert changed.digest != first.digest and changed.consumers != first.consumers


def test_the_linker_links_again_only_what_an_edit_reaches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a cache, the Python linker links again only the modules whose consumers an edit can
    change (`subguard.extract.python.linkmemo`): the edited module; the modules that read a changed
    constant; a factory's module when a file calls it anew; a fixture's module when a test takes it;
    a module whose consumer is passed to a changed function; the modules that asked for the
    dependency hint when the requirements change; when files are added or removed, only the modules
    an import of which now resolves to another module. Each scan equals a scan without a cache."""
    from subguard.core.config import Config
    from subguard.extract.python import link
    from subguard.scan.extraction import scan_repo

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("SUBGUARD_CACHE_DIR", raising=False)
    linked: list[str] = []
    relink = link.Linker._link
    monkeypatch.setattr(
        link.Linker,
        "_link",
        lambda self, plans, *a: linked.extend(p.module.path for p in plans) or relink(self, plans, *a),
    )
    root = tmp_path / "repo"
    make_repo(root)
    config = Config()
    editor = Editor(root, 0)

    def relinked() -> list[str]:
        linked.clear()
        warm = scan_repo(root, config, cache_key="k")
        again = sorted(set(linked))
        assert warm == scan_repo(root, config)
        return again

    everything = relinked()
    consumers = [p for p in everything if p.startswith("svc")]
    assert {"common/factory.py", "tests/conftest.py", "svc2/registered.py"} < set(everything), everything
    assert relinked() == []
    path = root / "svc1" / "consumer_1.py"
    editor.write(path, path.read_text(encoding="utf-8") + "\n")
    assert relinked() == ["svc1/consumer_1.py"]
    editor.write(root / "common" / "names.py", CONSTANTS.format(group_a="GID_C", topic="TopicPay", tags="TagB"))
    assert relinked() == consumers  # each reads TOPIC
    path = root / "svc1" / "util.py"
    editor.write(path, path.read_text(encoding="utf-8") + CALLER.format(group="GID_X", tags="TagB"))
    assert relinked() == ["common/factory.py"]
    path = root / "tests" / "test_orders.py"
    editor.write(path, path.read_text(encoding="utf-8") + "\n\n" + FIXTURE_USER.format(n=7))
    assert relinked() == ["tests/conftest.py"]
    editor.write(root / "common" / "register.py", REGISTER.format(tags="TagB"))
    assert relinked() == ["svc2/registered.py"]
    editor.write(root / "svc1" / "requirements.txt", REQUIREMENTS[1])
    assert relinked() == ["common/factory.py", "svc2/registered.py", "tests/conftest.py"]
    editor.add_caller()  # a new caller of the factory: the factory's module only
    assert relinked() == ["common/factory.py"]
    editor.write(root / "svc2" / "more.py", PLAIN.format(n=9))  # a file no import resolves to
    assert relinked() == []
    editor.shadow(1)  # svc1/common/names.py: svc1's `from common.names import ...` now resolves there
    shadowed = [p for p in consumers if p.startswith("svc1/")]
    assert shadowed and relinked() == shadowed
    editor.shadow(1)  # and taken away again
    assert relinked() == shadowed


SHARED = Path(__file__).resolve().parent / "rules" / "SG301" / "shared-module"


def test_a_build_file_edit_relinks_the_deployments_of_a_shared_module(tmp_path: Path) -> None:
    """Which deployments run a shared module's listeners follows the poms (`manifests.depends`, a
    fact the scan reads after extraction): a cached run after a pom edit, a new module or a removed
    dependency equals a cold one."""
    root = tmp_path / "repo"
    shutil.copytree(SHARED, root)
    assert _check(root).returncode == 0
    dependency = "<dependency><groupId>com.acme</groupId><artifactId>shop-mq</artifactId>"
    billing = root / "billing/src/main/java/com/acme/bill"

    def drop_manager_dependency() -> None:
        pom = root / "manager/pom.xml"
        pom.write_text(
            pom.read_text().replace(dependency, "<dependency><groupId>com.acme</groupId><artifactId>none</artifactId>")
        )

    def add_billing() -> None:
        billing.mkdir(parents=True)
        (billing / "Billing.java").write_text("package com.acme.bill;\n\npublic class Billing {}\n")
        (root / "billing/pom.xml").write_text(
            (root / "payment/pom.xml").read_text().replace("shop-payment", "shop-billing")
        )
        with (root / "docker-compose.yml").open("a") as f:
            f.write("  billing:\n    build: ./billing\n")

    counts = []
    for edit in (drop_manager_dependency, add_billing):
        edit()
        warm, cold = _check(root), _check(root, "--no-cache")
        assert warm.returncode == cold.returncode == 0, (warm.stderr, cold.stderr)
        assert warm.stdout == cold.stdout, edit.__name__
        counts.append(cold.stdout.count('"rule": "SG301"'))
    assert counts == [1, 2]  # payment; payment and billing (manager no longer packages the listener)
