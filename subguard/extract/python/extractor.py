"""The Python extractor: RocketMQ consumers declared with the three Python clients.

- rocketmq-client-python 2.x and PyPI `rocketmq` 0.4.x (`rocketmq.client.PushConsumer` /
  `PullConsumer`, C++ core) -> python-native-4x / python-rocketmq-0.4;
- rocketmq-python-client 5.x (`from rocketmq import SimpleConsumer, PushConsumer`) -> python-grpc-5x.

Per file, a pure libcst parse produces picklable facts (`py_parse.parse_full`, behind `ctx.memo`);
per repo, `py_link.Linker` resolves values across modules and builds the `Consumer` records.
Scanned code is never imported or executed.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from subguard.core.model import ClientFamily, FileRecord, FileStatus
from subguard.extract.base import ExtractResult, RepoContext, SourceFile
from subguard.extract.python.ir import Failure, ModuleFacts, ParseOutcome
from subguard.extract.python.link import Linker
from subguard.extract.python.resolve import ModuleSource

LOADED_FOR_CONSTANTS = "loaded to resolve imported constants"
LOADED_FOR_CALLS = "loaded to find factory call sites"
NO_CONSUMER_CLASS = "names no consumer class (constants only)"
# A full parse (names, positions; ~3x a plain libcst parse) only for files that name a consumer class.
CONSUMER_NEEDLES = (b"PushConsumer", b"PullConsumer", b"SimpleConsumer")

_DEPENDENCY_FILES = re.compile(r"(?:^|/)(?:requirements[^/]*\.(?:txt|in)|pyproject\.toml|setup\.py|setup\.cfg|Pipfile)$")
_NATIVE_DEP = re.compile(r"rocketmq-client-python", re.IGNORECASE)
_ROCKETMQ04_DEP = re.compile(r"""(?m)(?:^|["'\s,=\[])rocketmq\s*(?:[=<>~!]=?\s*0\.|["',;\]]|$)""")


class PythonExtractor:
    """`*.py` / `*.pyi` files mentioning rocketmq."""

    name = "python"
    needles: tuple[bytes, ...] = (b"rocketmq",)

    def claims(self, path: str) -> bool:
        return path.endswith((".py", ".pyi"))

    def extract(self, files: Sequence[SourceFile], repo: RepoContext) -> ExtractResult:
        records: dict[str, FileRecord] = {}
        full: dict[str, ModuleFacts] = {}
        pre_light: dict[str, ModuleFacts] = {}
        deep_files = [(f.path, f.data) for f in files if any(n in f.data for n in CONSUMER_NEEDLES)]
        repo.prefetch("python", deep_files, parse_full)  # the expensive parses, on every core
        for f in files:
            deep = any(n in f.data for n in CONSUMER_NEEDLES)
            outcome = _memo(repo, "python" if deep else "python-constants", f.path, f.data, full=deep)
            if isinstance(outcome, Failure):
                records[f.path] = _failure_record(f.path, outcome)
                continue
            if deep:
                full[f.path] = outcome
                records[f.path] = FileRecord(path=f.path, status=FileStatus.PARSED, extractor=self.name)
            else:
                pre_light[f.path] = outcome
                records[f.path] = FileRecord(path=f.path, status=FileStatus.PARSED, reason=NO_CONSUMER_CLASS, extractor=self.name)
        loaded: dict[str, str] = {}

        def light(path: str) -> ModuleFacts | None:
            if path in pre_light:
                return pre_light[path]
            data = repo.read(path)
            if data is None:
                return None
            outcome = _memo(repo, "python-constants", path, data, full=False)
            if path not in records:
                records[path] = (
                    _failure_record(path, outcome) if isinstance(outcome, Failure)
                    else FileRecord(path=path, status=FileStatus.PARSED, reason=LOADED_FOR_CONSTANTS, extractor=self.name)
                )
            return None if isinstance(outcome, Failure) else outcome

        def load_calls(names: frozenset[tuple[str, str]]) -> list[ModuleFacts]:
            """Full facts of other Python files that mention a factory's module and name."""
            out: list[ModuleFacts] = []
            needles = [(m.encode(), n.encode()) for m, n in names]
            # one C-level scan for any of the names first: most files mention none (speed only)
            any_name = re.compile(b"|".join(re.escape(n) for _, n in needles))
            for path in sorted(repo.paths):
                if not self.claims(path) or path in full:
                    continue
                if path in loaded:
                    facts = modules.full.get(path)
                    if facts is not None:
                        out.append(facts)
                    continue
                data = repo.read(path)
                if data is None or not any_name.search(data) or not any(n in data and m in data for m, n in needles):
                    continue
                loaded[path] = LOADED_FOR_CALLS
                outcome = _memo(repo, "python", path, data, full=True)
                if isinstance(outcome, Failure):
                    records.setdefault(path, _failure_record(path, outcome))
                    continue
                records[path] = FileRecord(path=path, status=FileStatus.PARSED, reason=LOADED_FOR_CALLS, extractor=self.name)
                modules.full[path] = outcome
                out.append(outcome)
            return out

        modules = ModuleSource(repo.paths, full, light)
        hint_cache: list[ClientFamily | None] = []

        def dependency_hint() -> ClientFamily | None:
            if not hint_cache:
                hint_cache.append(_dependency_family(repo))
            return hint_cache[0]

        consumers = Linker(modules, load_calls, dependency_hint).consumers() if full else []
        return ExtractResult(consumers=tuple(consumers), files=tuple(records.values()))


def parse_full(path: str, data: bytes) -> ParseOutcome:
    """`py_parse.parse_full`, imported on first use: a run whose parses all come from the cache never
    loads libcst (about a quarter of a second)."""
    from subguard.extract.python import parse as py_parse

    return py_parse.parse_full(path, data)


def parse_light(path: str, data: bytes) -> ParseOutcome:
    """`py_parse.parse_light`, imported on first use (see `parse_full`)."""
    from subguard.extract.python import parse as py_parse

    return py_parse.parse_light(path, data)


def _memo(repo: RepoContext, kind: str, path: str, data: bytes, full: bool) -> ParseOutcome:
    parse = parse_full if full else parse_light
    result = repo.memo(kind, path, data, lambda: parse(path, data))
    assert isinstance(result, (ModuleFacts, Failure))
    return result


def _failure_record(path: str, failure: Failure) -> FileRecord:
    status = FileStatus.SKIPPED if failure.status == "skipped" else FileStatus.FAILED
    return FileRecord(path=path, status=status, reason=failure.reason, extractor="python")


def _dependency_family(repo: RepoContext) -> ClientFamily | None:
    """Which 4.x package the repo declares: rocketmq-client-python, or PyPI rocketmq (0.4.x)."""
    native = old = False
    for path in sorted(repo.paths):
        if not _DEPENDENCY_FILES.search(path) or posixpath.basename(path).startswith("."):
            continue
        data = repo.read(path)
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        native = native or bool(_NATIVE_DEP.search(text))
        old = old or bool(_ROCKETMQ04_DEP.search(text))
    if native != old:
        return ClientFamily.PYTHON_NATIVE_4X if native else ClientFamily.PYTHON_ROCKETMQ_04
    return None


EXTRACTOR = PythonExtractor()
