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
from subguard.extract import NEEDLES, PARSED_IN_FULL
from subguard.extract import SUFFIXES as EXTRACTOR_SUFFIXES
from subguard.extract.base import ExtractResult, RepoContext, SourceFile, content_digests
from subguard.extract.python.attrs import parse_attrs
from subguard.extract.python.ir import Failure, ModuleFacts, ParseOutcome
from subguard.extract.python.link import Linker
from subguard.extract.python.linkmemo import Store, paths_digest
from subguard.extract.python.resolve import ModuleSource

LOADED_FOR_CONSTANTS = "loaded to resolve imported constants"
LOADED_FOR_CALLS = "loaded to find factory call sites"
LOADED_FOR_VALUES = "loaded to resolve values (base classes, command-line options)"
NO_CONSUMER_CLASS = "names no consumer class (constants only)"
# A full parse (names, positions; ~3x a plain libcst parse) only for files that name a consumer class.
CONSUMER_NEEDLES = PARSED_IN_FULL["python"][1]
SUFFIXES = EXTRACTOR_SUFFIXES["python"]  # the files the extractor claims

_DEPENDENCY_FILES = re.compile(
    r"(?:^|/)(?:requirements[^/]*\.(?:txt|in)|pyproject\.toml|setup\.py|setup\.cfg|Pipfile)$"
)
_NATIVE_DEP = re.compile(r"rocketmq-client-python", re.IGNORECASE)
_ROCKETMQ04_DEP = re.compile(r"""(?m)(?:^|["'\s,=\[])rocketmq\s*(?:[=<>~!]=?\s*0\.|["',;\]]|$)""")


class PythonExtractor:
    """`*.py` / `*.pyi` files mentioning rocketmq."""

    name = "python"
    needles: tuple[bytes, ...] = NEEDLES["python"]

    def claims(self, path: str) -> bool:
        return path.endswith(SUFFIXES)

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
                records[f.path] = FileRecord(
                    path=f.path, status=FileStatus.PARSED, reason=NO_CONSUMER_CLASS, extractor=self.name
                )
        loader = _Loader(self, repo, records, full, pre_light)
        modules = loader.modules
        hint_cache: list[ClientFamily | None] = []

        def dependency_hint() -> ClientFamily | None:
            if not hint_cache:
                hint_cache.append(_dependency_family(repo))
            return hint_cache[0]

        linker = Linker(modules, loader.load_calls, dependency_hint, _store(repo, files))
        consumers = linker.consumers() if full else []
        return ExtractResult(consumers=tuple(consumers), files=tuple(records.values()))


class _Loader:
    """Modules loaded beyond the claimed files, each recorded with why it was read."""

    def __init__(
        self,
        extractor: PythonExtractor,
        repo: RepoContext,
        records: dict[str, FileRecord],
        full: dict[str, ModuleFacts],
        pre_light: dict[str, ModuleFacts],
    ) -> None:
        self.extractor = extractor
        self.repo = repo
        self.records = records
        self.full = full
        self.pre_light = pre_light
        self.loaded: dict[str, str] = {}
        self.modules = ModuleSource(repo.paths, full, self.light, self.load_full, self.load_attrs)

    def _record(self, path: str, reason: str) -> None:
        self.records[path] = FileRecord(
            path=path, status=FileStatus.PARSED, reason=reason, extractor=self.extractor.name
        )

    def light(self, path: str) -> ModuleFacts | None:
        if path in self.pre_light:
            return self.pre_light[path]
        data = self.repo.read(path)
        if data is None:
            return None
        outcome = _memo(self.repo, "python-constants", path, data, full=False)
        if path not in self.records:
            if isinstance(outcome, Failure):
                self.records[path] = _failure_record(path, outcome)
            else:
                self._record(path, LOADED_FOR_CONSTANTS)
        return None if isinstance(outcome, Failure) else outcome

    def load_calls(self, names: frozenset[tuple[str, str]]) -> list[ModuleFacts]:
        """Full facts of other Python files that mention a factory's module and name (a fixture's
        name: module "")."""
        out: list[ModuleFacts] = []
        needles = [(m.encode(), n.encode()) for m, n in names]
        # one C-level scan for any of the names first: most files mention none (speed only)
        # (a scan with a content cache answers unchanged files from the verdicts it kept)
        any_name = b"|".join(re.escape(n) for _, n in sorted(set(needles)))
        full, loaded = self.full, self.loaded
        paths = [p for p in self.repo.paths_ending(SUFFIXES) if p not in full]  # what `claims` takes, in order
        fresh = [p for p in paths if p not in loaded]
        mention = set(self.repo.matching(any_name, fresh))
        # in path order: those loaded before (their facts) and those that mention a name
        for path in sorted(mention.union(set(paths).difference(fresh))):
            if path in self.loaded:
                facts = self.modules.full.get(path)
                if facts is not None:
                    out.append(facts)
                continue
            data = self.repo.read(path)
            if data is None or not any(n in data and m in data for m, n in needles):
                continue
            self.loaded[path] = LOADED_FOR_CALLS
            outcome = _memo(self.repo, "python", path, data, full=True)
            if isinstance(outcome, Failure):
                self.records.setdefault(path, _failure_record(path, outcome))
                continue
            self._record(path, LOADED_FOR_CALLS)
            self.modules.full[path] = outcome
            out.append(outcome)
        return out

    def load_full(self, path: str) -> ModuleFacts | None:
        """Full facts of a module a value leads to (a base class's methods, a parser's options)."""
        data = self.repo.read(path) if self.extractor.claims(path) else None
        if data is None:
            return None
        outcome = _memo(self.repo, "python", path, data, full=True)
        if isinstance(outcome, Failure):
            self.records.setdefault(path, _failure_record(path, outcome))
            return None
        if path not in self.records:
            self._record(path, LOADED_FOR_VALUES)
        return outcome

    def load_attrs(self, path: str) -> ModuleFacts | None:
        """Classes and instance attributes of a module a base class lives in (stdlib `ast`, quick)."""
        data = self.repo.read(path) if self.extractor.claims(path) else None
        if data is None:
            return None
        outcome = self.repo.memo("python-attrs", path, data, lambda: parse_attrs(path, data))
        assert isinstance(outcome, (ModuleFacts, Failure))
        if isinstance(outcome, Failure):
            return None  # the light or full parse reports the file when it is read for another reason
        if path not in self.records:
            self._record(path, LOADED_FOR_VALUES)
        return outcome


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


def _store(repo: RepoContext, files: Sequence[SourceFile]) -> Store | None:
    """Where the linker keeps its units for the next run, with this run's content digests (None:
    the scan keeps nothing)."""
    digest = content_digests(repo, files)
    if digest is None:
        return None
    return Store(repo.last, repo.keep, digest, paths_digest(repo.paths_ending(SUFFIXES)))


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
