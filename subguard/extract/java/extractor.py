"""Java extractor (tree-sitter, no JVM): listener annotations and consumers built in code.

Per file, `java_facts` (memoised) gives imports, constants, annotations and consumer declarations;
then constants are linked across the repo (`Symbols`, loading classes the prefilter skipped via
`ctx.read` and recording them as parsed), and Spring placeholders are resolved against the config
the Spring extractor exposed (`ctx.prior["spring"].facts["modules"]`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from subguard.core.model import Consumer, FileRecord, FileStatus
from subguard.deploy.service import module_dir
from subguard.extract import NEEDLES
from subguard.extract.base import ExtractResult, RepoContext, SourceFile
from subguard.extract.java import running
from subguard.extract.java.consumers import code_consumers, listener_consumers, refused_listener
from subguard.extract.java.facts import JavaFacts, java_facts
from subguard.extract.java.link import Linker, decl_where
from subguard.extract.java.resolve import Symbols, Where
from subguard.extract.java.spring import module_for
from subguard.extract.spring.extractor import ModuleConfig
from subguard.extract.spring.versions import adjust_listener, build_versions


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
        symbols = Symbols(parsed, repo.paths, load, lambda rx: bool(repo.matching(rx, sources)))
        spring = repo.prior.get("spring")
        modules: Mapping[str, ModuleConfig] = spring.facts.get("modules", {}) if spring is not None else {}
        consumers: list[Consumer] = []
        versions = build_versions(repo)
        linker = Linker(symbols, lambda p: module_for(p, modules, repo.paths))
        for path, facts in parsed.items():
            module = module_for(path, modules, repo.paths)
            build_dir = module_dir(path, repo.paths)
            for ann in facts.annotations:
                refused = refused_listener(ann, Where(path, facts, ann.class_name), symbols)
                for c in listener_consumers(ann, Where(path, facts, ann.class_name), symbols, module):
                    c = c.model_copy(update={"startup_failure": refused}) if refused is not None else c
                    c = running.listener_consumer(ann, facts, c)
                    kept = adjust_listener(
                        c, build_dir, module.profiles if module else (), module.views if module else {}, versions
                    )
                    if kept is not None:  # rocketmq.consumer.listeners.<group>.<topic>=false drops it
                        consumers.append(kept)
            for decl in facts.consumers:
                made = running.code_consumers(
                    decl, facts, code_consumers(decl, decl_where(path, facts, decl), symbols, module)
                )
                linker.add(path, facts, decl, made)
                consumers.extend(made)
        for path, facts in parsed.items():
            consumers.extend(linker.instances(path, facts))
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
        return ExtractResult(consumers=tuple(consumers), files=tuple(records))


EXTRACTOR = JavaExtractor()
