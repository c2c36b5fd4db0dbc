"""Build-file extractor: the RocketMQ client versions each module depends on.

Claims `pom.xml`, `build.gradle`, `build.gradle.kts` and `gradle/libs.versions.toml`. Per module
dir (the build file's directory) it records the versions of the artifacts in
`client_versions.ARTIFACTS` as `facts["modules"]`: module dir -> {"group:artifact": Value}; a
version it cannot resolve is an unknown Value with the reason. Later extractors read it
(`client_versions.versions_for`) to apply version-specific client behaviour.

- Maven: `${prop}` from `<properties>` of the pom and its parents in the repo (by `relativePath`,
  else by coordinates), `project.*` built-ins, `<dependencyManagement>` (inherited) and the SCA
  BOM; dependencies declared in a parent are inherited. XML is parsed with expat without any DTD:
  a DOCTYPE or ENTITY declaration is rejected before parsing and by handlers while parsing.
- Gradle: `'g:a:v'` strings, `group: .., name: .., version: ..` maps (Groovy and Kotlin),
  `$var`/`${var}` from simple assignments and `gradle.properties`, version catalog accessors
  `libs.x.y` against `gradle/libs.versions.toml`, and `platform(...)`/`mavenBom` of the SCA BOM.
"""

from __future__ import annotations

import posixpath
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from xml.parsers import expat

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from subguard.core.model import FileRecord, FileStatus, Location, Resolution, Value
from subguard.extract import NEEDLES
from subguard.extract.base import ExtractResult, RepoContext, SourceFile
from subguard.rocketmq.client_versions import ARTIFACTS, SCA_BOM, SCA_STREAM

POM = "pom.xml"
GRADLE = ("build.gradle", "build.gradle.kts")
CATALOG = "gradle/libs.versions.toml"
WANTED = ARTIFACTS | {SCA_BOM}
_MAX_DEPTH = 12


@dataclass(frozen=True)
class Failure:
    reason: str
    line: int


# ---- Maven ---------------------------------------------------------------------------------------


@dataclass
class _Node:
    tag: str
    line: int
    column: int
    text: str = ""
    children: list[_Node] = field(default_factory=list)

    def child(self, name: str) -> _Node | None:
        return next((c for c in self.children if c.tag == name), None)

    def all(self, *names: str) -> list[_Node]:
        nodes = [self]
        for name in names:
            nodes = [c for n in nodes for c in n.children if c.tag == name]
        return nodes

    def value(self, name: str) -> str | None:
        c = self.child(name)
        return c.text.strip() if c is not None else None


class UnsafeXml(ValueError):
    def __init__(self, reason: str, line: int) -> None:
        super().__init__(reason)
        self.line = line


_DTD = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


def parse_xml(data: bytes) -> _Node:
    """A small element tree with positions; raises UnsafeXml for DTDs and expat.ExpatError for bad XML."""
    hit = _DTD.search(data)
    if hit is not None:
        line = data.count(b"\n", 0, hit.start()) + 1
        raise UnsafeXml(f"XML with a {hit.group(1).decode().upper()} declaration is not read (entity expansion)", line)
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    root = _Node("#document", 1, 1)
    stack = [root]

    def refuse(*_: object) -> int:
        raise UnsafeXml("XML with a DTD or entity declaration is not read", parser.CurrentLineNumber)

    def start(tag: str, _attrs: dict[str, str]) -> None:
        node = _Node(
            tag.rpartition("}")[2].rpartition(" ")[2], parser.CurrentLineNumber, parser.CurrentColumnNumber + 1
        )
        stack[-1].children.append(node)
        stack.append(node)

    def end(_tag: str) -> None:
        stack.pop()

    def chars(text: str) -> None:
        stack[-1].text += text

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.UnparsedEntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    parser.Parse(data, True)
    return root


@dataclass(frozen=True)
class Dep:
    coords: str  # group:artifact as written (may hold ${...})
    version: str | None
    scope: str
    type: str
    line: int
    column: int


@dataclass(frozen=True)
class PomFacts:
    group: str | None
    artifact: str | None
    version: str | None
    parent: tuple[str, str, str, str | None] | None  # group, artifact, version, relativePath (None = default)
    properties: tuple[tuple[str, str], ...]
    dependencies: tuple[Dep, ...]
    managed: tuple[Dep, ...]
    resources: tuple[str, ...] | None = None  # `<build><resources>` directories as written (None: none declared)


def _deps(nodes: list[_Node]) -> tuple[Dep, ...]:
    return tuple(
        Dep(
            f"{n.value('groupId') or ''}:{n.value('artifactId') or ''}",
            n.value("version"),
            n.value("scope") or "",
            n.value("type") or "jar",
            n.line,
            n.column,
        )
        for n in nodes
    )


def pom_facts(data: bytes) -> PomFacts | Failure:
    """One pom.xml -> its facts, or a failure with reason and line (pure, memoisable)."""
    try:
        doc = parse_xml(data)
    except UnsafeXml as exc:
        return Failure(str(exc), exc.line)
    except expat.ExpatError as exc:
        return Failure(f"not well-formed XML: {expat.ErrorString(exc.code)}", exc.lineno)
    project = doc.child("project")
    if project is None:
        return Failure("not a Maven pom: no <project> root element", 1)
    parent_node = project.child("parent")
    parent = None
    if parent_node is not None:
        rel = parent_node.child("relativePath")
        parent = (
            parent_node.value("groupId") or "",
            parent_node.value("artifactId") or "",
            parent_node.value("version") or "",
            rel.text.strip() if rel is not None else None,
        )
    props_node = project.child("properties")
    props = tuple((p.tag, p.text.strip()) for p in props_node.children) if props_node is not None else ()
    return PomFacts(
        group=project.value("groupId"),
        artifact=project.value("artifactId"),
        version=project.value("version"),
        parent=parent,
        properties=props,
        dependencies=_deps(project.all("dependencies", "dependency")),
        managed=_deps(project.all("dependencyManagement", "dependencies", "dependency")),
        resources=_resources(project),
    )


def _resources(project: _Node) -> tuple[str, ...] | None:
    """The `<build><resources><resource><directory>`s of a pom, None when it declares no `<resources>`."""
    build = project.child("build")
    node = build.child("resources") if build is not None else None
    if node is None:
        return None
    return tuple(d for r in node.all("resource") if (d := (r.value("directory") or "").strip()))


_PLACEHOLDER = re.compile(r"\$\{([^}]+)\}")


def interpolate(text: str, props: Mapping[str, str], depth: int = 0) -> tuple[str | None, str]:
    """Resolve Maven `${x}`; (None, missing name) when a property is not defined."""
    missing = ""

    def sub(m: re.Match[str]) -> str:
        nonlocal missing
        key = m.group(1).strip()
        if key not in props or depth > _MAX_DEPTH:
            missing = missing or key
            return m.group(0)
        inner, miss = interpolate(props[key], props, depth + 1)
        if inner is None:
            missing = missing or miss
            return m.group(0)
        return inner

    out = _PLACEHOLDER.sub(sub, text)
    return (None, missing) if missing else (out, "")


class MavenModel:
    """Effective-model pieces subguard needs: inherited properties, dependencies and management."""

    def __init__(self, facts_of: Callable[[str], PomFacts | None], pom_paths: Sequence[str]) -> None:
        self._facts_of = facts_of
        self._pom_paths = sorted(pom_paths)
        self._by_coords: dict[str, str] | None = None

    def _coords_index(self) -> dict[str, str]:
        if self._by_coords is None:
            self._by_coords = {}
            for path in self._pom_paths:
                f = self._facts_of(path)
                if f is not None and f.artifact:
                    group = f.group or (f.parent[0] if f.parent else "")
                    self._by_coords.setdefault(f"{group}:{f.artifact}", path)
        return self._by_coords

    def find(self, coords: str) -> str | None:
        return self._coords_index().get(coords)

    def parent_of(self, path: str, facts: PomFacts) -> str | None:
        if facts.parent is None:
            return None
        group, artifact, _, rel = facts.parent
        if rel != "":
            target = posixpath.normpath(
                posixpath.join(posixpath.dirname(path), rel if rel is not None else "../pom.xml")
            )
            if not target.endswith(".xml"):
                target = posixpath.join(target, POM)
            found = self._facts_of(target) if not target.startswith("..") else None
            if found is not None and found.artifact == artifact:
                return target
        return self.find(f"{group}:{artifact}")

    def chain(self, path: str) -> list[tuple[str, PomFacts]]:
        """The pom and its in-repo ancestors, child first."""
        out: list[tuple[str, PomFacts]] = []
        seen: set[str] = set()
        current: str | None = path
        while current is not None and current not in seen and len(out) < _MAX_DEPTH:
            seen.add(current)
            facts = self._facts_of(current)
            if facts is None:
                break
            out.append((current, facts))
            current = self.parent_of(current, facts)
        return out

    def properties(self, chain: list[tuple[str, PomFacts]]) -> dict[str, str]:
        props: dict[str, str] = {}
        for _, facts in reversed(chain):
            props.update(dict(facts.properties))
        own = chain[0][1]
        parent = own.parent
        version = own.version or (parent[2] if parent else None)
        group = own.group or (parent[0] if parent else None)
        builtins = {
            "project.version": version,
            "pom.version": version,
            "version": version,
            "project.groupId": group,
            "project.artifactId": own.artifact,
            "project.parent.version": parent[2] if parent else None,
            "project.parent.groupId": parent[0] if parent else None,
        }
        props.update({k: v for k, v in builtins.items() if v})
        return props

    def managed(
        self, chain: list[tuple[str, PomFacts]], props: Mapping[str, str], depth: int = 0
    ) -> dict[str, tuple[str | None, str, Dep]]:
        """coords -> (version or None, why unknown, where) from dependencyManagement and imported BOMs."""
        out: dict[str, tuple[str | None, str, Dep]] = {}
        for path, facts in reversed(chain):
            for dep in facts.managed:
                coords, _ = interpolate(dep.coords, props)
                if coords is None:
                    continue
                version, missing = interpolate(dep.version, props) if dep.version else (None, "no <version>")
                if dep.scope == "import" and dep.type == "pom":
                    out.update(self._bom(coords, version, dep, path, depth))
                out[coords] = (version, missing, dep)
        return out

    def _bom(
        self, coords: str, version: str | None, dep: Dep, path: str, depth: int
    ) -> dict[str, tuple[str | None, str, Dep]]:
        out: dict[str, tuple[str | None, str, Dep]] = {}
        if coords == SCA_BOM:  # the SCA BOM manages its starters at its own version
            out[SCA_STREAM] = (version, f"SCA BOM version not resolved ({path})", dep)
        inner = self.find(coords)
        if inner is not None and depth < 3:
            chain = self.chain(inner)
            for key, (v, why, _) in self.managed(chain, self.properties(chain), depth + 1).items():
                out[key] = (v, why, dep)
        return out


def _loc(path: str, line: int, column: int) -> Location:
    return Location(path=path, line=line, column=column)


def maven_versions(path: str, model: MavenModel) -> dict[str, Value]:
    chain = model.chain(path)
    if not chain:
        return {}
    props = model.properties(chain)
    managed = model.managed(chain, props)
    out: dict[str, Value] = {}
    for where, facts in reversed(chain):  # inherited first, the pom's own declarations win
        for dep in facts.dependencies:
            coords, _ = interpolate(dep.coords, props)
            if coords not in ARTIFACTS:
                continue
            loc = _loc(where, dep.line, dep.column)
            if dep.version:
                version, missing = interpolate(dep.version, props)
                out[coords] = _value(version, dep.version, missing, loc)
            elif coords in managed:
                version, missing, mdep = managed[coords]
                out[coords] = _value(version, mdep.version or "", missing, loc, "from <dependencyManagement>")
            else:
                out[coords] = Value.unknown(
                    "no <version> and no dependencyManagement entry in the repo (an external parent or BOM)", loc
                )
    return out


def _value(version: str | None, written: str, missing: str, loc: Location, how: str = "") -> Value:
    if version is None:
        return Value.unknown(f"version {written or '?'}: {missing} is not defined in the repo", loc)
    if version == written and not how:
        return Value(value=version, resolution=Resolution.LITERAL, location=loc)
    detail = ", ".join(x for x in (written if "${" in written else "", how) if x)
    return Value(value=version, resolution=Resolution.PLACEHOLDER, detail=detail, location=loc)


# ---- Gradle --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GradleDep:
    coords: str
    version: str | None  # as written, may hold $var
    line: int
    column: int


@dataclass(frozen=True)
class GradleFacts:
    variables: tuple[tuple[str, str], ...]
    deps: tuple[GradleDep, ...]
    catalog_refs: tuple[tuple[str, int, int], ...]  # accessor (dotted, after `libs.`), line, column


def _blank_comments(text: str) -> str:
    """Replace `//` and `/* */` comments by spaces (strings kept), preserving offsets."""
    out = list(text)
    i, n, quote = 0, len(text), ""
    while i < n:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out[i:end] = [c if c == "\n" else " " for c in text[i:end]]
            i = end
            continue
        i += 1
    return "".join(out)


_GROUPS = r"(?:org\.apache\.rocketmq|com\.alibaba\.cloud)"
_STRING_DEP = re.compile(
    r"""(['"])(""" + _GROUPS + r""":[\w.\-]+)(?::((?:\$\{[^}\n]*\}|\$\w+|[^'"@:\s$])+))?(?::[\w\-]+)?(?:@\w+)?\1"""
)
_MAP_DEP = re.compile(
    r"""group\s*[:=]\s*(['"])(""" + _GROUPS + r""")\1\s*,\s*name\s*[:=]\s*(['"])([\w.\-]+)\3"""
    r"""(?:\s*,\s*version\s*[:=]\s*(?:(['"])([^'"]*)\5|([\w.]+)))?"""
)
_ASSIGN = re.compile(
    r"""^\s*(?:(?:def|val|var|String)\s+|(?:project\.|rootProject\.)?ext\.|extra\[\s*["']|set\(\s*["'])?"""
    r"""([A-Za-z_][\w.]*?)["']?\]?\s*(?:=|,)\s*(['"])([^'"$]*)\2""",
    re.MULTILINE,
)
_CATALOG_REF = re.compile(r"\blibs\.((?!versions\.|plugins\.|bundles\.)[A-Za-z][\w.]*)")


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def gradle_facts(data: bytes) -> GradleFacts:
    text = _blank_comments(data.decode("utf-8", "replace"))
    variables = tuple(
        (m.group(1).rpartition(".")[2] if m.group(1).startswith("ext.") else m.group(1), m.group(3))
        for m in _ASSIGN.finditer(text)
    )
    deps: list[GradleDep] = []
    for m in _STRING_DEP.finditer(text):
        deps.append(GradleDep(m.group(2), m.group(3), *_line_col(text, m.start())))
    for m in _MAP_DEP.finditer(text):
        version = m.group(6) if m.group(5) else (f"${{{m.group(7)}}}" if m.group(7) else None)
        deps.append(GradleDep(f"{m.group(2)}:{m.group(4)}", version, *_line_col(text, m.start())))
    refs = tuple((m.group(1).rstrip("."), *_line_col(text, m.start())) for m in _CATALOG_REF.finditer(text))
    return GradleFacts(variables, tuple(deps), refs)


_GVAR = re.compile(
    r"\$\{?\s*(?:project\.|rootProject\.)?(?:ext\.)?(?:property\(\s*[\"'])?([A-Za-z_][\w.]*?)(?:[\"']\s*\))?\s*\}|\$([A-Za-z_]\w*)"
)


def gradle_interpolate(text: str, variables: Mapping[str, str]) -> tuple[str | None, str]:
    missing = ""

    def sub(m: re.Match[str]) -> str:
        nonlocal missing
        key = m.group(1) or m.group(2)
        key = key.rpartition(".")[2] if key not in variables else key
        if key in variables:
            return variables[key]
        missing = missing or key
        return m.group(0)

    out = _GVAR.sub(sub, text)
    return (None, missing) if missing else (out, "")


# ---- version catalogs ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CatalogFacts:
    libraries: tuple[tuple[str, str, Value], ...]  # accessor, coords, version


def _accessor(alias: str) -> str:
    return re.sub(r"[-_.]", ".", alias).lower()


def catalog_facts(path: str, data: bytes) -> CatalogFacts | Failure:
    text = data.decode("utf-8", "replace")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        return Failure(f"invalid TOML: {exc}", int(m.group(1)) if m else 1)
    versions = doc.get("versions", {}) if isinstance(doc.get("versions"), dict) else {}
    libraries = doc.get("libraries", {}) if isinstance(doc.get("libraries"), dict) else {}
    out: list[tuple[str, str, Value]] = []
    for alias, spec in libraries.items():
        m = re.search(rf"^\s*{re.escape(alias)}\s*=", text, re.MULTILINE)
        loc = _loc(path, *_line_col(text, m.start())) if m else _loc(path, 1, 1)
        coords, version = _library(spec, versions)
        if coords in WANTED:
            value = (
                Value(
                    value=version, resolution=Resolution.CONSTANT, detail=f"version catalog alias {alias}", location=loc
                )
                if version
                else Value.unknown(f"version catalog alias {alias} has no version it can resolve", loc)
            )
            out.append((_accessor(alias), coords, value))
    return CatalogFacts(tuple(out))


def _library(spec: object, versions: Mapping[str, object]) -> tuple[str, str | None]:
    if isinstance(spec, str):
        parts = spec.split(":")
        return ":".join(parts[:2]), parts[2] if len(parts) > 2 else None
    if not isinstance(spec, dict):
        return "", None
    coords = spec.get("module") or f"{spec.get('group', '')}:{spec.get('name', '')}"
    version = spec.get("version")
    ref = spec.get("version.ref") or (version.get("ref") if isinstance(version, dict) else None)
    if isinstance(spec.get("version"), dict) and "ref" not in spec["version"]:
        inner = spec["version"]
        version = inner.get("strictly") or inner.get("require") or inner.get("prefer")
    if ref is not None:
        version = versions.get(str(ref))
        if isinstance(version, dict):
            version = version.get("strictly") or version.get("require") or version.get("prefer")
    return str(coords), version if isinstance(version, str) else None


# ---- the extractor -------------------------------------------------------------------------------


def _kind(path: str) -> str:
    base = posixpath.basename(path)
    if base == POM:
        return "maven"
    if base in GRADLE:
        return "gradle"
    if path == CATALOG or path.endswith("/" + CATALOG):
        return "catalog"
    return ""


class BuildExtractor:
    name = "build"
    needles: tuple[bytes, ...] = NEEDLES["build"]

    def claims(self, path: str) -> bool:
        return bool(_kind(path))

    def extract(self, files: Sequence[SourceFile], repo: RepoContext) -> ExtractResult:
        given = {f.path: f.data for f in files}
        records: dict[str, FileRecord] = {}
        poms: dict[str, PomFacts | None] = {}

        def record(path: str, parsed: object, loaded: bool) -> None:
            if isinstance(parsed, Failure):
                records[path] = FileRecord(
                    path=path,
                    status=FileStatus.FAILED,
                    reason=f"line {parsed.line}: {parsed.reason}",
                    extractor=self.name,
                )
            else:
                reason = "" if not loaded else "loaded to resolve versions"
                records[path] = FileRecord(path=path, status=FileStatus.PARSED, reason=reason, extractor=self.name)

        def pom(path: str) -> PomFacts | None:
            if path in poms:
                return poms[path]
            data = given.get(path)
            loaded = data is None
            if loaded:
                data = repo.read(path) if path in repo.paths else None
            if data is None:
                poms[path] = None
                return None
            parsed = repo.memo(self.name, path, data, lambda: pom_facts(data))
            record(path, parsed, loaded)
            poms[path] = parsed if isinstance(parsed, PomFacts) else None
            return poms[path]

        modules: dict[str, dict[str, Value]] = {}
        model = MavenModel(pom, [p for p in repo.paths if posixpath.basename(p) == POM])
        catalogs = self._catalogs(given, repo, record)
        for path in sorted(given):
            kind = _kind(path)
            module = posixpath.dirname(path)
            if kind == "maven":
                if pom(path) is not None:
                    modules.setdefault(module, {}).update(maven_versions(path, model))
            elif kind == "gradle":
                facts = repo.memo(self.name, path, given[path], lambda path=path: gradle_facts(given[path]))  # type: ignore[misc]
                record(path, facts, False)
                modules.setdefault(module, {}).update(self._gradle(path, facts, repo, catalogs))
        return ExtractResult(files=tuple(records.values()), facts={"modules": modules})

    def _catalogs(
        self, given: Mapping[str, bytes], repo: RepoContext, record: Callable[[str, object, bool], None]
    ) -> dict[str, CatalogFacts]:
        """Catalogs by the root dir they serve (the dir holding `gradle/`)."""
        out: dict[str, CatalogFacts] = {}
        for path in sorted(p for p in repo.paths if _kind(p) == "catalog"):
            data = given.get(path)
            loaded = data is None
            if data is None:
                data = repo.read(path)
            if data is None:
                continue
            parsed = repo.memo(self.name, path, data, lambda path=path, data=data: catalog_facts(path, data))  # type: ignore[misc]
            if not loaded or isinstance(parsed, Failure):
                record(path, parsed, loaded)
            if isinstance(parsed, CatalogFacts):
                out[posixpath.dirname(posixpath.dirname(path))] = parsed
        return out

    def _gradle(
        self, path: str, facts: GradleFacts, repo: RepoContext, catalogs: Mapping[str, CatalogFacts]
    ) -> dict[str, Value]:
        variables: dict[str, str] = {}
        folder = posixpath.dirname(path)
        dirs = [folder]
        while folder:
            folder = posixpath.dirname(folder)
            dirs.append(folder)
        for d in reversed(dirs):  # root gradle.properties first, the module's own wins
            props = (
                repo.read(posixpath.join(d, "gradle.properties"))
                if posixpath.join(d, "gradle.properties") in repo.paths
                else None
            )
            if props is not None:
                for entry in props.decode("utf-8", "replace").splitlines():
                    m = re.match(r"\s*([\w.\-]+)\s*[=:]\s*(.*?)\s*$", entry)
                    if m and not entry.lstrip().startswith(("#", "!")):
                        variables[m.group(1)] = m.group(2)
        variables.update(dict(facts.variables))
        out: dict[str, Value] = {}
        bom: Value | None = None
        for dep in facts.deps:
            if dep.coords not in WANTED:
                continue
            loc = _loc(path, dep.line, dep.column)
            if dep.version is None:
                value = Value.unknown(
                    "no version (a platform/BOM or dependency management outside the file decides)", loc
                )
            else:
                resolved, missing = gradle_interpolate(dep.version, variables)
                value = _value(resolved, dep.version, missing, loc)
            if dep.coords == SCA_BOM:
                bom = value
            elif dep.coords not in out or not out[dep.coords].known:
                out[dep.coords] = value
        catalog = next((catalogs[d] for d in dirs if d in catalogs), None)
        for accessor, line, column in facts.catalog_refs if catalog is not None else ():
            for alias, coords, value in catalog.libraries if catalog is not None else ():
                if alias == accessor.lower():
                    loc = _loc(path, line, column)
                    hit = value.model_copy(
                        update={
                            "detail": f"{value.detail} ({value.location})" if value.location else value.detail,
                            "location": loc,
                        }
                    )
                    if coords == SCA_BOM:
                        bom = hit
                    else:
                        out.setdefault(coords, hit)
        if bom is not None and (SCA_STREAM in out and not out[SCA_STREAM].known):
            out[SCA_STREAM] = bom.model_copy(
                update={"detail": "version from the SCA BOM", "location": out[SCA_STREAM].location}
            )
        return out


EXTRACTOR = BuildExtractor()


# ---- the repo's build graph, read on demand by the Spring extractor ----------------------------------

_BINDER = re.compile(
    r"^(?:org\.springframework\.cloud|com\.alibaba\.cloud|org\.apache\.rocketmq):spring-cloud-(?:starter-stream|stream-binder)-(rocketmq|rabbit|kafka(?:-streams)?)$"
)
_GRADLE_BINDER = re.compile(
    r"""['"][\w.\-]+:spring-cloud-(?:starter-stream|stream-binder)-(rocketmq|rabbit|kafka(?:-streams)?)(?::[^'"]*)?['"]"""
)
_GRADLE_PROJECT = re.compile(r"""\bproject\s*\(\s*(?:path\s*[:=]\s*)?['"](:[^'"]*)['"]""")
_SETTINGS = ("settings.gradle", "settings.gradle.kts")


def binder_type(coords: str) -> str | None:
    """`rocketmq` / `rabbit` / `kafka` for a Spring Cloud Stream binder artifact, else None."""
    m = _BINDER.match(coords)
    return m.group(1).split("-")[0] if m else None


class RepoBuilds:
    """The repo's build files as a graph, loaded lazily through `repo.read` (pom facts memoised
    under the build extractor's name): which Spring Cloud Stream binders a module has on its
    class path, and which modules of the repo depend on which."""

    def __init__(self, repo: RepoContext) -> None:
        self._repo = repo
        self._poms: dict[str, PomFacts | None] = {}
        self._texts: dict[str, str | None] = {}
        pom_paths = sorted(p for p in repo.paths if posixpath.basename(p) == POM)
        self._model = MavenModel(self._pom, pom_paths)
        self._build_files = {
            posixpath.dirname(p): p for p in sorted(repo.paths) if posixpath.basename(p) in (POM, *GRADLE)
        }
        self._deps: dict[str, tuple[str, ...]] | None = None

    def _pom(self, path: str) -> PomFacts | None:
        if path not in self._poms:
            data = self._repo.read(path) if path in self._repo.paths else None
            parsed = self._repo.memo("build", path, data, lambda: pom_facts(data)) if data is not None else None
            self._poms[path] = parsed if isinstance(parsed, PomFacts) else None
        return self._poms[path]

    def _text(self, path: str) -> str | None:
        if path not in self._texts:
            data = self._repo.read(path) if path in self._repo.paths else None
            self._texts[path] = _blank_comments(data.decode("utf-8", "replace")) if data is not None else None
        return self._texts[path]

    def build_file(self, module: str) -> str | None:
        """The build file of `module` or of its nearest ancestor that has one."""
        folder = module
        while True:
            if folder in self._build_files:
                return self._build_files[folder]
            if not folder:
                return None
            folder = folder.rpartition("/")[0]

    def binders(self, module: str) -> frozenset[str] | None:
        """Binder types the module depends on (inherited Maven dependencies included); None when no
        build file of the module or an ancestor is in the repo."""
        path = self.build_file(module)
        if path is None:
            return None
        if posixpath.basename(path) == POM:
            chain = self._model.chain(path)
            if not chain:
                return None
            props = self._model.properties(chain)
            found = set()
            for _, facts in chain:
                for dep in facts.dependencies:
                    coords, _ = interpolate(dep.coords, props)
                    kind = binder_type(coords or "")
                    if kind is not None and dep.scope != "test":
                        found.add(kind)
            return frozenset(found)
        text = self._text(path)
        return frozenset(m.group(1).split("-")[0] for m in _GRADLE_BINDER.finditer(text)) if text is not None else None

    def dependencies(self) -> dict[str, tuple[str, ...]]:
        """module dir -> module dirs of the repo it depends on directly (Maven coordinates found in
        the repo, Gradle `project(':a:b')`), test scope left out."""
        if self._deps is not None:
            return self._deps
        out: dict[str, tuple[str, ...]] = {}
        for module, path in self._build_files.items():
            found: list[str] = []
            if posixpath.basename(path) == POM:
                chain = self._model.chain(path)
                props = self._model.properties(chain) if chain else {}
                for dep in chain[0][1].dependencies if chain else ():
                    coords, _ = interpolate(dep.coords, props)
                    target = self._model.find(coords) if coords and dep.scope != "test" else None
                    if target is not None and posixpath.dirname(target) != module:
                        found.append(posixpath.dirname(target))
            else:
                text = self._text(path) or ""
                root = self._settings_root(module)
                for m in _GRADLE_PROJECT.finditer(text):
                    target = (
                        posixpath.join(root, *[s for s in m.group(1).split(":") if s]) if m.group(1) != ":" else root
                    )
                    target = posixpath.normpath(target) if target else ""
                    if target != module and (target in self._build_files or not target):
                        found.append("" if target == "." else target)
            if found:
                out[module] = tuple(dict.fromkeys(found))
        self._deps = out
        return out

    def maven_modules(self) -> list[str]:
        """The folders of the repo's poms."""
        return [m for m, path in self._build_files.items() if posixpath.basename(path) == POM]

    def resource_dirs(self, module: str) -> tuple[str, ...]:
        """The repo folders a Maven module's `<build><resources>` put on its class path besides its
        own `src/main/resources` (its pom's, else the nearest ancestor pom's that declares them,
        relative to the module; `${project.basedir}` / `${basedir}` read as the module)."""
        path = self._build_files.get(module)
        if path is None or posixpath.basename(path) != POM:
            return ()
        declared = next((f.resources for _, f in self._model.chain(path) if f.resources is not None), None)
        out: list[str] = []
        for raw in declared or ():
            text = raw.replace("${project.basedir}", ".").replace("${basedir}", ".")
            if "${" in text or text.startswith("/"):
                continue
            folder = posixpath.normpath(posixpath.join(module, text))
            if folder.startswith("..") or folder == posixpath.normpath(posixpath.join(module, "src/main/resources")):
                continue
            out.append("" if folder == "." else folder)
        return tuple(dict.fromkeys(out))

    def _settings_root(self, module: str) -> str:
        folder = module
        while True:
            if any(posixpath.join(folder, s) in self._repo.paths for s in _SETTINGS):
                return folder
            if not folder:
                return ""
            folder = folder.rpartition("/")[0]
