"""Where a subscription's expression is written, found again in the file at fix time.

The extractors say where a value came from (`Value.resolution`, `detail`, `location`); this module
finds the exact characters: the literal at the call, a constant's definition (Python: the dotted name
in `detail`; Java: the definition's location), a placeholder's config entry. For a value that is
defined apart from its use it also lists every reference to that name in the repository, so the
planner can tell whether changing the definition changes anything but the subscriptions it fixes."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from subguard.core.model import Location, Resolution, Subscription
from subguard.fix import java, properties, python, yaml_scalar
from subguard.fix.model import Site, Slice
from subguard.fix.source import Files, Source
from subguard.scan.extraction import ScanResult

LANGS: dict[str, ModuleType] = {
    ".py": python,
    ".java": java,
    ".yml": yaml_scalar,
    ".yaml": yaml_scalar,
    ".properties": properties,
}
BY_NAME: dict[str, ModuleType] = {m.LANG: m for m in (python, java, yaml_scalar, properties)}
_TEXT_SUFFIXES = (".java", ".kt", ".groovy", ".scala", ".py", ".yml", ".yaml", ".properties", ".xml", ".json", ".conf")
_LITERALS = (Resolution.LITERAL, Resolution.ENV_DEFAULT, Resolution.OPTION_DEFAULT)
_CONSTANTS = (Resolution.CONSTANT, Resolution.IMPORTED_CONSTANT)


def lang_of(path: str) -> ModuleType | None:
    return LANGS.get(Path(path).suffix.lower())


class Locator:
    """Finds sites in the scanned roots; every file is read once per run."""

    def __init__(self, results: Sequence[ScanResult], files: Files | None = None) -> None:
        self.files = files or Files()
        self._listing = {r.root: tuple(rec.path for rec in r.files) for r in results}

    def source(self, root: str, path: str) -> Source | None:
        base = Path(root)
        return self.files.get(base / path if base.is_dir() else base)

    def declaration(self, root: str, loc: Location) -> tuple[Path, int, int] | None:
        """The call, annotation or config entry that declares a subscription located at `loc`."""
        src, mod = self.source(root, loc.path), lang_of(loc.path)
        if src is None or mod is None:
            return None
        if mod in (python, java):
            span = mod.declaration(src, loc.line, loc.column)
            return None if span is None else (src.path, span[0], span[1])
        first, last = loc.span or (loc.line, loc.line)
        return (src.path, src.offset(first, 1), src.offset(last + 1, 1))

    def site(self, root: str, s: Subscription) -> Site | str:
        """Where `s`'s expression is written, or why it cannot be edited."""
        v = s.expression
        if v.value is None:
            return "the expression is not statically known"
        decl = self.declaration(root, s.location)
        vloc = v.location
        if v.resolution in _LITERALS or (
            v.resolution is Resolution.PLACEHOLDER
            and vloc is not None
            and vloc.path == s.location.path
            and lang_of(vloc.path) in (python, java)
        ):
            return self._literal(root, vloc, s.location, decl, v.value)
        if v.resolution in _CONSTANTS:
            return self._constant(root, s, decl)
        if v.resolution is Resolution.PLACEHOLDER and vloc is not None:
            return self._placeholder(root, s, decl)
        if v.resolution is Resolution.DEFAULT:
            return "the expression is the client's default, not written anywhere"
        return f"subguard cannot tell where the expression is written ({v.resolution.value})"

    def _literal(
        self,
        root: str,
        vloc: Location | None,
        sloc: Location,
        decl: tuple[Path, int, int] | None,
        value: str,
    ) -> Site | str:
        loc = vloc or sloc
        src, mod = self.source(root, loc.path), lang_of(loc.path)
        if src is None or mod is None:
            return f"{loc.path} cannot be edited by subguard"
        if mod in (yaml_scalar, properties):
            sl = mod.literal_at(src, loc.line, loc.column, value)
            if sl is None:
                return f"the value at {loc.path}:{loc.line} is not written as one plain value"
            return Site(src.path, loc.path, sl, value, declaration=decl)
        at = src.offset(loc.line, loc.column)
        if vloc is not None:
            if decl is not None and decl[0] == src.path and decl[1] <= at < decl[2]:
                lo, hi = decl[1], decl[2]
            else:
                lo, hi = at, src.offset(loc.line + 1, 1)
            found = [sl for sl in mod.literal_in(src, lo, hi, value) if sl.start >= at]
            found = found[:1]
        elif decl is not None and decl[0] == src.path:
            found = mod.literal_in(src, decl[1], decl[2], value, skip=src.offset(sloc.line, sloc.column))
        else:
            found = []
        if len(found) != 1:
            what = "no" if not found else "more than one"
            return f"{what} string literal holding {value!r} found at {loc.path}:{loc.line}"
        return Site(src.path, loc.path, found[0], value, declaration=decl)

    def _constant(self, root: str, s: Subscription, decl: tuple[Path, int, int] | None) -> Site | str:
        v = s.expression
        assert v.value is not None
        name = v.detail.rsplit(".", 1)[-1]
        if not name:
            return "the constant's name is not known"
        mod = lang_of(s.location.path)
        if mod is java and v.location is not None:
            src = self.source(root, v.location.path)
            if src is None:
                return f"cannot read {v.location.path}"
            at = src.offset(v.location.line, v.location.column)
            found = [
                sl for sl in java.literal_in(src, at, src.offset(v.location.line + 1, 1), v.value) if sl.start - 1 == at
            ]
            if len(found) != 1:
                return f"the definition of {v.detail} at {v.location.path}:{v.location.line} is not one string literal"
            return self._shared(
                root, Site(src.path, v.location.path, found[0], v.value, name=name, declaration=decl), java
            )
        if mod is python:
            got = self._python_definition(root, s, v.detail, v.value)
            if isinstance(got, str):
                return got
            path, src, sl = got
            return self._shared(root, Site(src.path, path, sl, v.value, name=name, declaration=decl), python)
        return f"subguard cannot edit the definition of {v.detail}"

    def _python_definition(
        self, root: str, s: Subscription, detail: str, value: str
    ) -> tuple[str, Source, Slice] | str:
        parts = tuple(detail.split("."))
        candidates: list[tuple[str, tuple[str, ...]]] = [(s.location.path, parts)] if len(parts) <= 2 else []
        listing = [p for p in self._listing.get(root, ()) if p.endswith(".py")]
        for i in range(len(parts) - 1, 0, -1):
            module, attrs = parts[:i], parts[i:]
            for ending in ("/".join(module) + ".py", "/".join(module) + "/__init__.py"):
                candidates += [(p, attrs) for p in listing if p == ending or p.endswith("/" + ending)]
        hits: list[tuple[str, Source, Slice]] = []
        for path, attrs in candidates:
            src = self.source(root, path)
            sl = python.definition(src, attrs, value) if src is not None else None
            if src is not None and sl is not None and (path, sl) not in [(h[0], h[2]) for h in hits]:
                hits.append((path, src, sl))
        if len(hits) != 1:
            return f"the definition of {detail} is {'not found' if not hits else 'ambiguous'}"
        return hits[0]

    def _shared(self, root: str, site: Site, mod: ModuleType) -> Site:
        """The site with every reference to its constant in the repository's files of its language."""
        suffix = ".py" if mod is python else ".java"
        uses: list[tuple[Path, int, str]] = []
        for path in self._listing.get(root, ()):
            if not path.endswith(suffix):
                continue
            src = self.source(root, path)
            if src is None or site.name not in src.text:
                continue
            offsets = (
                python.uses(src, site.name)
                if mod is python
                else java.uses(src, site.name, site.slice.start if src.path == site.file else None)
            )
            uses += [(src.path, o, f"{path}:{src.position(o)[0]}") for o in offsets]
        return Site(site.file, site.path, site.slice, site.value, site.name, tuple(uses), site.declaration)

    def _placeholder(self, root: str, s: Subscription, decl: tuple[Path, int, int] | None) -> Site | str:
        v = s.expression
        assert v.value is not None and v.location is not None
        key = v.detail.strip()
        got = self._literal(root, v.location, v.location, None, v.value)
        if isinstance(got, str):
            return f"{got} (the value of placeholder ${{{key}}})"
        uses: list[tuple[Path, int, str]] = []
        doubts: list[str] = []
        pattern = re.compile(r"\$\{" + re.escape(key) + r"[}:]|[\"']" + re.escape(key) + r"[\"']")
        defined = re.compile(
            r"^[ \t]*" + re.escape(key) + r"[ \t]*[=:]|^[ \t]*" + re.escape(key.rsplit(".", 1)[-1]) + r"[ \t]*:",
            re.MULTILINE,
        )
        for path in self._listing.get(root, ()):
            if not path.endswith(_TEXT_SUFFIXES):
                continue
            src = self.source(root, path)
            if src is None or key.rsplit(".", 1)[-1] not in src.text:
                continue
            uses += [(src.path, m.start(), f"{path}:{src.position(m.start())[0]}") for m in pattern.finditer(src.text)]
            if path.endswith((".yml", ".yaml", ".properties")):
                for m in defined.finditer(src.text):
                    where = src.position(m.start())[0]
                    if src.path != got.file or where != v.location.line:
                        doubts.append(f"{path}:{where}")
        doubt = f"'{key}' may also be set at {', '.join(doubts[:3])} (the profile in effect decides)" if doubts else ""
        return Site(got.file, got.path, got.slice, v.value, key, tuple(uses), decl, doubt)
