"""Java extractor (tree-sitter, no JVM): listener annotations and consumers built in code.

Per file, `java_facts` (memoised) gives imports, constants, annotations and consumer declarations;
then constants are linked across the repo (`Symbols`, loading classes the prefilter skipped via
`ctx.read` and recording them as parsed), and Spring placeholders are resolved against the config
the Spring extractor exposed (`ctx.prior["spring"].facts["modules"]`).
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from subguard.core.model import Consumer, FileRecord, FileStatus
from subguard.deploy.service import module_dir
from subguard.extract import NEEDLES
from subguard.extract.base import ExtractResult, RepoContext, SourceFile, content_digests
from subguard.extract.java import running
from subguard.extract.java.conditions import inactive
from subguard.extract.java.consumers import code_consumers, listener_consumers, refused_listener
from subguard.extract.java.facts import JavaFacts, java_facts
from subguard.extract.java.link import TEMPLATES, Linker, decl_where
from subguard.extract.java.linkmemo import (
    FIRST,
    SECOND,
    Answer,
    Linked,
    Question,
    Step,
    Store,
    settings_digest,
)
from subguard.extract.java.resolve import Symbols, Where
from subguard.extract.java.spring import module_for
from subguard.extract.spring.extractor import ModuleConfig
from subguard.extract.spring.versions import Versions, adjust_listener, build_versions


def _failed(path: str, facts: JavaFacts, name: str) -> FileRecord:
    return FileRecord(
        path=path, status=FileStatus.FAILED, reason=f"line {facts.error_line}: {facts.error}", extractor=name
    )


def _parse(path: str, data: bytes) -> JavaFacts:
    """The per-file parse, as a picklable function for `RepoContext.prefetch`."""
    return java_facts(data)


class JavaExtractor:
    name = "java"
    needles: tuple[bytes, ...] = NEEDLES["java"]

    def claims(self, path: str) -> bool:
        return path.endswith(".java")

    def _facts(self, repo: RepoContext, path: str, data: bytes) -> JavaFacts:
        result: JavaFacts = repo.memo(self.name, path, data, lambda: _parse(path, data))
        return result

    def extract(self, files: Sequence[SourceFile], repo: RepoContext) -> ExtractResult:
        records: list[FileRecord] = []
        parsed: dict[str, JavaFacts] = {}
        repo.prefetch(self.name, [(f.path, f.data) for f in files], _parse)
        for f in files:
            facts = self._facts(repo, f.path, f.data)
            if facts.error is not None:
                records.append(_failed(f.path, facts, self.name))
            else:
                parsed[f.path] = facts
                records.append(FileRecord(path=f.path, status=FileStatus.PARSED, extractor=self.name))

        def load(path: str) -> JavaFacts | None:
            data = repo.read(path)
            return self._facts(repo, path, data) if data is not None else None

        sources = [p for p in repo.paths if p.endswith((".java", ".kt", ".groovy"))]
        symbols = Symbols(parsed, repo.paths, load, lambda rx: repo.matching(rx, sources))
        spring = repo.prior.get("spring")
        modules: Mapping[str, ModuleConfig] = spring.facts.get("modules", {}) if spring is not None else {}
        versions = build_versions(repo)
        by_folder: dict[str, tuple[ModuleConfig | None, str]] = {}

        def module_of(path: str) -> tuple[ModuleConfig | None, str]:
            """A file's Spring module and build module folder (both follow from its folder)."""
            folder = posixpath.dirname(path)
            got = by_folder.get(folder)
            if got is None:
                got = by_folder[folder] = (module_for(path, modules, repo.paths), module_dir(path, repo.paths))
            return got

        linker = Linker(symbols, lambda p: module_of(p)[0])
        steps = _Steps(_store(repo, files), symbols, linker, modules, versions)
        consumers: list[Consumer] = []
        places: dict[str, tuple[str, str]] = {}
        for path, facts in parsed.items():
            module, build_dir = module_of(path)
            places[path] = (module.module if module is not None else "", build_dir)
            make = functools.partial(self._declared, path, facts, module, build_dir, symbols, linker, versions)
            made, kept = steps.first(path, places[path], make)
            for i in made.templates if kept else ():  # the templates making it would have added
                linker.add_template(path, facts, facts.consumers[i], made.consumers)
            consumers.extend(made.consumers)
        for path, facts in parsed.items():
            instances = functools.partial(_instances, linker, path, facts)
            consumers.extend(steps.second(path, places[path], instances))
        for path, loaded in symbols.loaded.items():
            if loaded is None:
                continue
            records.append(
                _failed(path, loaded, self.name)
                if loaded.error
                else FileRecord(
                    path=path, status=FileStatus.PARSED, extractor=self.name, reason="loaded to resolve constants"
                )
            )
        steps.save(tuple(parsed))
        return ExtractResult(consumers=tuple(consumers), files=tuple(records))

    @staticmethod
    def _declared(
        path: str,
        facts: JavaFacts,
        module: ModuleConfig | None,
        build_dir: str,
        symbols: Symbols,
        linker: Linker,
        versions: Versions,
    ) -> _Made:
        """A file's listener consumers and the consumers its code constructs (templates kept by
        `linker`, their indexes noted): the first step."""
        out: list[Consumer] = []
        for ann in facts.annotations:
            refused = refused_listener(ann, Where(path, facts, ann.class_name), symbols)
            off = inactive(Where(path, facts, ann.class_name), module, symbols)
            for c in listener_consumers(ann, Where(path, facts, ann.class_name), symbols, module):
                c = c.model_copy(update={"startup_failure": refused}) if refused is not None else c
                c = running.listener_consumer(ann, facts, c)
                c = running.never(c, off) if off and not c.never_runs else c
                kept = adjust_listener(
                    c, build_dir, module.profiles if module else (), module.views if module else {}, versions
                )
                if kept is not None:  # rocketmq.consumer.listeners.<group>.<topic>=false drops it
                    out.append(kept)
        templates: list[int] = []
        for i, decl in enumerate(facts.consumers):
            made = running.code_consumers(
                decl, facts, code_consumers(decl, decl_where(path, facts, decl), symbols, module)
            )
            off = inactive(decl_where(path, facts, decl), module, symbols)
            made = [running.never(c, off) if off and not c.never_runs else c for c in made]
            if linker.add(path, facts, decl, made):
                templates.append(i)
            out.extend(made)
        return _Made(out, tuple(templates))


@dataclass(frozen=True)
class _Made:
    """What one step of one file made: its consumers, and (the first step) which of its
    constructions are templates."""

    consumers: list[Consumer]
    templates: tuple[int, ...] = ()


class _Steps:
    """Each file's two steps, taken as kept when they stand (`linkmemo.Store.replays`), else made
    while their questions are noted; without a store, made."""

    def __init__(
        self,
        store: Store | None,
        symbols: Symbols,
        linker: Linker,
        modules: Mapping[str, ModuleConfig],
        versions: Versions,
    ) -> None:
        self.store = store
        self.symbols = symbols
        self.linker = linker
        self.old = store.linked() if store is not None else None
        self.settings = settings_digest(modules, versions) if store is not None else b""
        self.usable = self.old is not None and self.old.settings == self.settings
        self.steps: dict[str, Step] = {}

    def first(self, path: str, place: tuple[str, str], make: Callable[[], _Made]) -> tuple[_Made, bool]:
        """The first step of `path`, and whether it was kept (not made)."""
        return self._step(FIRST, path, place, make, self.symbols.answer)

    def second(self, path: str, place: tuple[str, str], make: Callable[[], _Made]) -> list[Consumer]:
        return self._step(SECOND, path, place, make, self._answer)[0].consumers

    def _answer(self, question: Question) -> Answer:
        return self.linker.answer(question) if question[0] == TEMPLATES else self.symbols.answer(question)

    def _step(
        self,
        prefix: str,
        path: str,
        place: tuple[str, str],
        make: Callable[[], _Made],
        ask: Callable[[Question], Answer],
    ) -> tuple[_Made, bool]:
        store = self.store
        if store is None:
            return make(), False
        kept = store.step(prefix, path) if self.usable else None
        if kept is not None and store.replays(kept, path, place, ask):
            self.steps[prefix + path] = kept
            return _Made(list(kept.consumers), kept.templates), True
        questions: list[tuple[Question, Answer]] = []
        tell = lambda question, answer: questions.append((question, answer))  # noqa: E731
        self.symbols.asked = self.linker.asked = tell
        try:
            made = make()
        finally:
            self.symbols.asked = self.linker.asked = None
        self.steps[prefix + path] = store.made(path, place, questions, made.consumers, made.templates)
        return made, False

    def save(self, files: tuple[str, ...]) -> None:
        if self.store is not None:
            self.store.save(self.steps, Linked(self.settings, files), self.old)


def _instances(linker: Linker, path: str, facts: JavaFacts) -> _Made:
    """The instances a file's calls make of the run's templates: the second step."""
    return _Made(list(linker.instances(path, facts)))


def _store(repo: RepoContext, files: Sequence[SourceFile]) -> Store | None:
    """Where the steps are kept for the next run, with this run's content digests (None: the scan
    keeps nothing)."""
    digest = content_digests(repo, files)
    if digest is None:
        return None
    return Store(repo.last, repo.keep, digest)


EXTRACTOR = JavaExtractor()
