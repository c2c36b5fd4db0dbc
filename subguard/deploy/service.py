"""Which service and environment a declaration belongs to, from config first and layout second."""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterable, Sequence
from typing import TypeVar

from subguard.core.config import Config
from subguard.core.model import Consumer, Deployment

# Files that mark the root of a buildable module (a service) in a repo.
MODULE_MARKERS = (
    "pom.xml", "build.gradle", "build.gradle.kts", "pyproject.toml", "setup.py", "setup.cfg",
    "package.json", "go.mod", "Chart.yaml",
)


def match_glob(path: str, pattern: str) -> bool:
    """Glob match where `**` spans directories and a pattern without `/` matches any segment prefix."""
    if fnmatch.fnmatchcase(path, pattern):
        return True
    if pattern.endswith("/**") and (path == pattern[:-3] or path.startswith(pattern[:-3] + "/")):
        return True
    return "**/" in pattern and fnmatch.fnmatchcase(path, pattern.replace("**/", ""))


def module_dir(path: str, paths: Iterable[str]) -> str:
    """Nearest ancestor directory of `path` that holds a module marker; "" for the repo root."""
    present = paths if isinstance(paths, (set, frozenset)) else set(paths)  # no 20,000-path copy per record
    folder = posixpath.dirname(path)
    while folder:
        if any(f"{folder}/{m}" in present for m in MODULE_MARKERS):
            return folder
        folder = posixpath.dirname(folder)
    return ""


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
    consumers: Sequence[Consumer], deployments: Sequence[Deployment], paths: frozenset[str], repo: str, config: Config
) -> tuple[list[Consumer], list[Deployment]]:
    """Fill in repo, service and (configured) environment for every record."""
    return (
        [_attribute_one(c, paths, repo, config) for c in consumers],
        [_attribute_one(d, paths, repo, config) for d in deployments],
    )
