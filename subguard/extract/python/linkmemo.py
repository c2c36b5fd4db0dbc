"""What linking one module's constructions read and made, kept for the next run (issue 20).

The linker links module by module (a `Unit`: the consumers constructed in one module). A unit is
linked again only when something it depends on changed; otherwise its consumers are taken as kept
and the modules it read are asked for again, in the same order, so the run reads, loads and records
exactly what linking it would (`Linker.consumers`). A unit depends on:

- the content of every module it asked the `ModuleSource` for (by digest), its own included;
- what it asked the repo's Python paths (`ModuleSource.asked`: the module an import resolves to, the
  settings modules, whether a file exists): after files are added or removed, it is linked again
  only when the new path set answers one of these questions otherwise;
- the dependency hint, when it asked for it;
- the callers of its factories and the users of its fixtures: a unit is linked again when a module
  that calls a name it wants (or takes it as a parameter) changed, appeared or went, before or after
  the change (`Linked.callers` keeps what each caller calls and takes), and when a module it read
  after the call-site search was loaded by that search in one run and not the other.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from subguard.core.model import ClientFamily, Consumer
from subguard.extract.python.ir import ModuleFacts
from subguard.extract.python.resolve import Question

LINKED = "link"  # the key of the repo's `Linked`
UNIT = "unit:"  # the prefix of each module's `Unit`
TOUCH = ""  # a module read directly (no `ModuleSource` call to repeat): its digest only


@dataclass(frozen=True)
class Unit:
    """One module's consumers and what linking them read."""

    before: tuple[tuple[str, str], ...]  # (how, path) asked for before the call-site search, in order
    after: tuple[tuple[str, str], ...]  # after it
    questions: tuple[tuple[Question, object], ...]  # what it asked the path set, with the answers then
    digests: tuple[tuple[str, bytes], ...]  # each module read, with its content's digest then
    names: frozenset[tuple[str, str]]  # what it asked the call-site search for: (module stem, name)
    wants: frozenset[str]  # the factory and fixture names whose callers make its instances
    hint: tuple[bool, ClientFamily | None]  # whether it asked for the dependency hint, and the answer
    consumers: tuple[Consumer, ...]

    def read(self) -> frozenset[str]:
        return frozenset(path for path, _digest in self.digests)


@dataclass(frozen=True)
class Linked:
    """The repo's link as a whole: its Python paths (a digest), the modules the call-site search
    loaded, each caller's digest with the names it calls or takes as parameters, and the units."""

    paths: bytes
    loaded: frozenset[str]
    callers: Mapping[str, tuple[bytes, frozenset[str]]]
    units: tuple[str, ...]


@dataclass(frozen=True)
class Store:
    """Where units are kept between runs (`RepoContext.last` / `keep`), and this run's view of the
    repo: each module's content digest (b"" unreadable) and the digest of its Python paths."""

    last: Callable[[str], Any]
    keep: Callable[[str, Any], None]
    digest: Callable[[str], bytes]
    paths: bytes

    def linked(self) -> Linked | None:
        got = self.last(LINKED)
        return got if isinstance(got, Linked) else None

    def unit(self, path: str) -> Unit | None:
        got = self.last(UNIT + path)
        return got if isinstance(got, Unit) else None

    def holds(self, unit: Unit, hint: Callable[[], ClientFamily | None]) -> bool:
        """Whether every module `unit` read is as it was, and the hint it asked for unchanged."""
        digest = self.digest
        return all(digest(path) == then for path, then in unit.digests) and (not unit.hint[0] or hint() == unit.hint[1])

    def digests(self, reads: Iterable[tuple[str, str]]) -> tuple[tuple[str, bytes], ...]:
        return tuple((path, self.digest(path)) for path in dict.fromkeys(path for _how, path in reads))

    def save(self, units: Mapping[str, Unit], linked: Linked, old: Linked | None) -> None:
        """Keep the units linked anew and the repo's `Linked`; forget the units of modules gone."""
        for path, unit in units.items():
            if self.unit(path) is not unit:
                self.keep(UNIT + path, unit)
        for path in old.units if old is not None else ():
            if path not in units:
                self.keep(UNIT + path, None)
        if linked != old:
            self.keep(LINKED, linked)


def paths_digest(paths: Iterable[str]) -> bytes:
    return hashlib.blake2b("\0".join(paths).encode("utf-8", "surrogateescape"), digest_size=16).digest()


def signature(module: ModuleFacts, written: Callable[[Any], str | None]) -> frozenset[str]:
    """The names a module calls (`written`: the name a callee is written with) or takes as a
    function's parameter (a pytest fixture is taken by name)."""
    called = (written(call.target) for call in module.calls)
    return frozenset(n for n in called if n is not None) | {p for fn in module.functions for p in fn.params}
