"""Which service and environment a declaration belongs to, from config first and layout second.

A service is the code under one module root. A folder is a module root when it holds

- a build file (`MODULE_MARKERS`: pom.xml, build.gradle, pyproject.toml, package.json, go.mod, Chart.yaml, ...);
- the Maven/Gradle standard layout: `src/main/...` or `src/test/...` directly inside it;
- a Dockerfile, or a deployment folder (`DEPLOY_DIRS`: k8s/, deploy/, helm/, chart/, ...) holding manifests,
  beside source files of its own (source outside that deployment folder).

Folders inside a `src/` tree never count by the last rule (`src/main/java/com/acme/deploy/` is a package).
The repo root is never a module root: paths outside every module belong to the repo-level service.
"""

from __future__ import annotations

import fnmatch
import functools
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from subguard.core.config import Config
from subguard.core.model import Consumer, Deployment

# Files that mark the root of a buildable module (a service) in a repo.
MODULE_MARKERS = (
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "package.json",
    "go.mod",
    "Chart.yaml",
)
# `<root>/src/<one of these>/...`: the Maven/Gradle standard layout.
LAYOUT_DIRS = frozenset({"main", "test"})
# Folders that hold a service's deployment manifests beside its source.
DEPLOY_DIRS = frozenset({"k8s", "kube", "kubernetes", "deploy", "helm", "chart", "charts"})
# Files that count as "source" for the Dockerfile / deployment-folder rules.
SOURCE_SUFFIXES = (".java", ".kt", ".scala", ".groovy", ".py", ".go", ".js", ".ts", ".rb", ".cs")
# Files that a deployment folder holds (a folder of only .java files named `deploy` is a package).
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json", ".tpl", ".jsonnet", ".libsonnet")


def is_dockerfile_path(path: str) -> bool:
    base = posixpath.basename(path)
    return (
        base == "Dockerfile"
        or base.startswith("Dockerfile.")
        or base.endswith(".Dockerfile")
        or base == "Containerfile"
    )


def match_glob(path: str, pattern: str) -> bool:
    """Glob match where `**` spans directories and a pattern without `/` matches any segment prefix."""
    if fnmatch.fnmatchcase(path, pattern):
        return True
    if pattern.endswith("/**") and (path == pattern[:-3] or path.startswith(pattern[:-3] + "/")):
        return True
    return "**/" in pattern and fnmatch.fnmatchcase(path, pattern.replace("**/", ""))


@dataclass(frozen=True)
class ModuleRoots:
    """The module roots of one repo's file list, each with why it is one."""

    roots: dict[
        str, str
    ]  # folder -> reason ("pom.xml", "src/main layout", "Dockerfile beside source", "k8s/ beside source")

    def module_dir(self, path: str) -> str:
        """Nearest ancestor folder of `path` that is a module root; "" for the repo root."""
        folder = posixpath.dirname(path)
        while folder:
            if folder in self.roots:
                return folder
            folder = posixpath.dirname(folder)
        return ""


def find_roots(paths: Iterable[str]) -> ModuleRoots:
    """Every module root of a repo (see the module docstring), from its file paths alone."""
    roots: dict[str, str] = {}
    layout: dict[str, str] = {}
    beside: dict[str, str] = {}  # folder -> what it holds beside source, if it has source
    with_source: set[str] = set()
    for path in paths:
        segs = path.split("/")
        dirs, base = segs[:-1], segs[-1]
        folder = "/".join(dirs)
        if base in MODULE_MARKERS and folder:
            roots.setdefault(folder, base)
        for i, seg in enumerate(dirs):
            if seg == "src":  # nothing inside a source tree marks a module but the layout itself
                if i > 0 and i + 1 < len(dirs) and dirs[i + 1] in LAYOUT_DIRS:
                    layout.setdefault("/".join(dirs[:i]), f"src/{dirs[i + 1]} layout")
                break
            if i > 0 and seg in DEPLOY_DIRS and base.endswith(MANIFEST_SUFFIXES):
                beside.setdefault("/".join(dirs[:i]), f"{seg}/ beside source")
        if folder and is_dockerfile_path(base) and "src" not in dirs:
            beside.setdefault(folder, base + " beside source")
        if base.endswith(SOURCE_SUFFIXES):
            for i in range(1, len(segs)):
                if segs[i] not in DEPLOY_DIRS or i == len(segs) - 1:
                    with_source.add("/".join(segs[:i]))
    for folder, why in layout.items():
        roots.setdefault(folder, why)
    for folder, why in beside.items():
        if folder in with_source:
            roots.setdefault(folder, why)
    return ModuleRoots(roots)


_KNOWN: dict[frozenset[str], ModuleRoots] = {}  # roots a caller already had for a path set (`know_roots`)


def know_roots(paths: frozenset[str], roots: ModuleRoots) -> None:
    """Tell `module_roots` the roots of `paths` (kept from an earlier run of the same path set)."""
    _KNOWN.clear()
    _KNOWN[paths] = roots


@functools.lru_cache(maxsize=8)
def _roots_of(paths: frozenset[str]) -> ModuleRoots:
    known = _KNOWN.get(paths)
    return known if known is not None else find_roots(paths)  # a frozenset caches its hash: one walk per repo


_LAST: list[tuple[frozenset[str], ModuleRoots]] = []  # the path set asked last, by identity


def module_roots(paths: Iterable[str]) -> ModuleRoots:
    if _LAST and _LAST[0][0] is paths:  # an equal set that is not the cached key costs a full comparison
        return _LAST[0][1]
    roots = _roots_of(paths if isinstance(paths, frozenset) else frozenset(paths))
    if isinstance(paths, frozenset):
        _LAST[:] = [(paths, roots)]
    return roots


def module_dir(path: str, paths: Iterable[str]) -> str:
    """Nearest ancestor directory of `path` that is a module root; "" for the repo root."""
    return module_roots(paths).module_dir(path)


def service_for(path: str, paths: Iterable[str], repo: str, config: Config) -> str:
    """Explicit `services:` mapping wins; else repo name plus the module directory, if any."""
    for name, spec in config.services.items():
        if any(match_glob(path, g) for g in spec.paths):
            return name
    module = module_dir(path, paths)
    if not module:
        return repo
    return f"{repo}/{module}" if repo else module


def environment_for(path: str, config: Config, hints: Sequence[str] = ()) -> str | None:
    """Environment named by config path globs, Spring profiles or namespaces in `hints`."""
    for name, spec in config.environments.items():
        if any(match_glob(path, g) for g in spec.paths):
            return name
        if any(h in spec.profiles or h in spec.namespaces for h in hints if h):
            return name
    return None


T = TypeVar("T", Consumer, Deployment)


def _attribute_one(record: T, paths: frozenset[str], repo: str, config: Config) -> T:
    path = record.location.path
    update: dict[str, object] = {}
    if not record.repo:
        update["repo"] = repo
    if not record.service:
        update["service"] = service_for(path, paths, repo, config)
    hint = [record.environment] if record.environment else []
    if isinstance(record, Deployment) and record.namespace:
        hint.append(record.namespace)
    env = environment_for(path, config, hint)
    if env is not None:
        update["environment"] = env
    if record.location.repo != repo:
        update["location"] = record.location.model_copy(update={"repo": repo})
    return record.model_copy(update=update) if update else record


def attribute(
    consumers: Sequence[Consumer],
    deployments: Sequence[Deployment],
    paths: frozenset[str],
    repo: str,
    config: Config,
    depends: Mapping[str, Sequence[str]] | None = None,
) -> tuple[list[Consumer], list[Deployment]]:
    """Fill in repo, service and (configured) environment for every record, and with `depends`
    (module dir -> the module dirs it depends on) the services each consumer's module is part of."""
    attributed = [_attribute_one(c, paths, repo, config) for c in consumers]
    return (
        hosted(attributed, depends, paths, repo, config) if depends else attributed,
        [_attribute_one(d, paths, repo, config) for d in deployments],
    )


def dependents(depends: Mapping[str, Sequence[str]]) -> dict[str, frozenset[str]]:
    """Module dir -> the module dirs that depend on it, directly or through other modules."""
    users: dict[str, set[str]] = {}
    for app in depends:
        stack, seen = list(depends[app]), set()
        while stack:
            lib = stack.pop()
            if lib in seen or lib == app:
                continue
            seen.add(lib)
            users.setdefault(lib, set()).add(app)
            stack.extend(depends.get(lib, ()))
    return {lib: frozenset(apps) for lib, apps in users.items()}


def hosted(
    consumers: Sequence[Consumer],
    depends: Mapping[str, Sequence[str]],
    paths: frozenset[str],
    repo: str,
    config: Config,
) -> list[Consumer]:
    """Each consumer of a module other modules depend on, with those modules' services (`hosted_by`):
    a shared module's listener runs in every application that packages it."""
    users = dependents(depends)
    if not users:
        return list(consumers)
    roots = module_roots(paths)
    out: list[Consumer] = []
    for c in consumers:
        apps = users.get(roots.module_dir(c.location.path), frozenset())
        hosts = sorted({service_for(posixpath.join(app, "pom.xml"), paths, repo, config) for app in apps} - {c.service})
        out.append(c.model_copy(update={"hosted_by": tuple(hosts)}) if hosts else c)
    return out
