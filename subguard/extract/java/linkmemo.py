"""What making one Java file's consumers read and asked, kept for the next run (issue 20).

The Java extractor makes a file's consumers in two steps: its listener annotations and consumer
constructions (the first step, file by file), then, once every file's templates are known, the
instances its calls make of them (the second). Each step of each file is kept as a `Step`: the
consumers it made and every question it asked the run's symbols (`Symbols.asked`: which class a
name resolves to, which file declares a type in its module, whether an annotation is written
anywhere) or the templates (which templates a class holds), with the answers. A step is not made
again when the file's content, its module's Spring config and the build's versions are as they
were, and each question, asked again in order, gets the same answer from a file whose content is
as it was; asking them again loads what making the step would, so the run records the same files.
At the first answer that differs the step is made again: up to there it asked what making it asks.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from subguard.core.model import Consumer

LINKED = "java-link"  # the repo's `Linked`
FIRST, SECOND = "java-first:", "java-second:"  # the prefix of each file's first and second `Step`

Question = tuple[str, ...]
Answer = Any  # None, a bool, or a tuple of (path, name) pairs


@dataclass(frozen=True)
class Step:
    """One step of one file: what it made, and what it asked with the answers and the contents of
    the files answered."""

    digest: bytes  # the file's content then
    place: tuple[str, str]  # its Spring module's folder ("" none) and its build module's folder then
    questions: tuple[tuple[Question, Answer], ...]
    reads: tuple[tuple[str, bytes], ...]  # each file an answer named, with its content's digest then
    consumers: tuple[Consumer, ...]
    templates: tuple[int, ...] = ()  # the first step: which of the file's constructions are templates


@dataclass(frozen=True)
class Linked:
    """What every step depends on, as a digest (`settings_digest`: each Spring module's config and
    the build's versions), and the files whose steps are kept."""

    settings: bytes
    files: tuple[str, ...]


def settings_digest(*settings: object) -> bytes:
    """A digest of what every step reads, by its `repr` (records and dataclasses show every field;
    a pickle would differ with which equal strings happen to be one object), so that kept steps
    never import the classes it holds."""
    return hashlib.blake2b(repr(settings).encode("utf-8", "surrogateescape"), digest_size=16).digest()


def paths_of(answer: Answer) -> list[str]:
    """The files an answer names."""
    return [path for path, _name in answer] if isinstance(answer, tuple) else []


@dataclass(frozen=True)
class Store:
    """Where steps are kept between runs (`RepoContext.last` / `keep`), and each file's content
    digest in this run."""

    last: Callable[[str], Any]
    keep: Callable[[str, Any], None]
    digest: Callable[[str], bytes]

    def linked(self) -> Linked | None:
        got = self.last(LINKED)
        return got if isinstance(got, Linked) else None

    def step(self, prefix: str, path: str) -> Step | None:
        got = self.last(prefix + path)
        return got if isinstance(got, Step) else None

    def replays(self, step: Step, path: str, place: tuple[str, str], ask: Callable[[Question], Answer]) -> bool:
        """Whether `step` of `path` stands: the file and its place unchanged, and each question,
        asked again in order, answered as then by files whose content is as then (stops at the
        first that is not)."""
        digest = self.digest
        if digest(path) != step.digest or place != step.place:
            return False
        then = dict(step.reads)
        for question, answer in step.questions:
            if ask(question) != answer:
                return False
            if isinstance(answer, tuple):  # the files it names: each as it was
                for named, _name in answer:
                    if digest(named) != then.get(named):
                        return False
        return True

    def made(
        self,
        path: str,
        place: tuple[str, str],
        questions: list[tuple[Question, Answer]],
        consumers: list[Consumer],
        templates: tuple[int, ...] = (),
    ) -> Step:
        reads = {p: self.digest(p) for _q, answer in questions for p in paths_of(answer)}
        return Step(self.digest(path), place, tuple(questions), tuple(reads.items()), tuple(consumers), templates)

    def save(self, steps: Mapping[str, Step], linked: Linked, old: Linked | None) -> None:
        """Keep the steps made anew and the repo's `Linked`; forget the steps of files gone."""
        for key, step in steps.items():
            if self.last(key) is not step:
                self.keep(key, step)
        for path in old.files if old is not None else ():
            if path not in linked.files:
                self.keep(FIRST + path, None)
                self.keep(SECOND + path, None)
        if linked != old:
            self.keep(LINKED, linked)
