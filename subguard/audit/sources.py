"""What the audit's SOURCE arguments are, and the inventory files that list repositories.

Three kinds, freely mixed on one command line:

- ``repos``: a folder whose subfolders are repositories (one repo per first-level folder);
- ``inventory``: a YAML or CSV file listing repositories (name, path or URI, optional team / owner /
  environment hints and the commit the clone is at); relative paths are relative to the file;
- ``jsonl``: a file, or a folder of files, written by ``subguard inventory --format jsonl`` (one
  repo's subscriptions each); they are merged without re-extracting.

Everything here is pure: the job hands in what it learned from the file system.
"""

from __future__ import annotations

import csv
import io
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

SourceKind = Literal["repos", "inventory", "jsonl"]
INVENTORY_SUFFIXES = (".yaml", ".yml", ".csv")
JSONL_SUFFIXES = (".jsonl", ".ndjson")
# an organisation folder may carry its own hints file next to the repositories
HINTS_FILES = ("inventory.yaml", "inventory.yml", "inventory.csv")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


class SourceError(ValueError):
    """A SOURCE that cannot be used: the message names it."""


@dataclass(frozen=True)
class Source:
    kind: SourceKind
    uri: str


@dataclass(frozen=True)
class RepoHint:
    """One repository named by an inventory: where it is, and who owns it."""

    name: str
    uri: str = ""
    team: str = ""
    owner: str = ""
    environment: str = ""
    commit: str = ""  # the commit its clone is checked out at (`stamps.inventory_commit`)


def join_uri(base_dir: str, path: str) -> str:
    """`path` if absolute or a URI, else `path` relative to the folder `base_dir`."""
    if _SCHEME.match(path) and not re.match(r"^[A-Za-z]:[\\/]", path):
        return path
    if path.startswith("/"):
        scheme = _SCHEME.match(base_dir)
        return f"{scheme.group(0)}{path}" if scheme and base_dir.startswith(f"{scheme.group(0)}/") else path
    return (
        posixpath.normpath(posixpath.join(base_dir, path))
        if not _SCHEME.match(base_dir)
        else _join_scheme(base_dir, path)
    )


def _join_scheme(base_dir: str, path: str) -> str:
    scheme = _SCHEME.match(base_dir)
    assert scheme is not None
    rest = base_dir[len(scheme.group(0)) :]
    lead = len(rest) - len(rest.lstrip("/"))
    joined = posixpath.normpath(posixpath.join(rest.lstrip("/") or ".", path))
    return f"{scheme.group(0)}{'/' * lead}{joined}"


def classify(uri: str, is_dir: bool, children: Sequence[tuple[str, bool]]) -> Source:
    """Decide a SOURCE's kind from its name and, for a folder, its first-level entries (name, is_dir)."""
    name = uri.rstrip("/").rsplit("/", 1)[-1].lower()
    if not is_dir:
        if name.endswith(INVENTORY_SUFFIXES):
            return Source("inventory", uri)
        if name.endswith(JSONL_SUFFIXES):
            return Source("jsonl", uri)
        raise SourceError(f"{uri}: not a folder, an inventory (.yaml/.yml/.csv) or a .jsonl inventory output")
    visible = [(n, d) for n, d in children if not n.startswith((".", "_"))]
    if any(d for _, d in visible):
        return Source("repos", uri)
    if any(n.lower().endswith(JSONL_SUFFIXES) for n, _ in visible):
        return Source("jsonl", uri)
    if not visible:
        raise SourceError(f"{uri}: empty folder (no repositories and no .jsonl inventory outputs)")
    raise SourceError(f"{uri}: holds neither repositories (subfolders) nor .jsonl inventory outputs")


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _hint(entry: dict[str, Any], base_dir: str, where: str) -> RepoHint:
    name = _text(entry.get("name") or entry.get("repo"))
    path = _text(entry.get("path") or entry.get("uri") or entry.get("url"))
    if not name and path:
        name = path.rstrip("/").rsplit("/", 1)[-1]
    if not name:
        raise SourceError(f"{where}: an entry has neither a name nor a path")
    return RepoHint(
        name=name,
        uri=join_uri(base_dir, path or name),
        team=_text(entry.get("team")),
        owner=_text(entry.get("owner")),
        environment=_text(entry.get("environment") or entry.get("env")),
        commit=_text(entry.get("commit")),
    )


def parse_inventory(text: str, uri: str) -> tuple[RepoHint, ...]:
    """Repositories listed by an inventory file (YAML: a list or `repos:` list; CSV with a header)."""
    base_dir = uri.rstrip("/").rsplit("/", 1)[0] if "/" in uri.rstrip("/") else "."
    entries: Iterable[Any]
    if uri.lower().endswith(".csv"):
        reader = csv.DictReader(io.StringIO(text))
        entries = [{(k or "").strip().lower(): v for k, v in row.items()} for row in reader]
    else:
        from ruamel.yaml import YAML
        from ruamel.yaml.error import YAMLError

        try:
            data = YAML(typ="safe", pure=True).load(text)
        except YAMLError as exc:
            raise SourceError(f"{uri}: invalid YAML: {str(exc).splitlines()[0]}") from None
        if isinstance(data, dict):
            data = data.get("repos", data.get("repositories"))
        if not isinstance(data, list):
            raise SourceError(f"{uri}: expected a list of repositories (or a `repos:` list)")
        entries = data
    hints: list[RepoHint] = []
    for i, entry in enumerate(entries, 1):
        if isinstance(entry, str):
            entry = {"path": entry}
        if not isinstance(entry, dict):
            raise SourceError(f"{uri}: entry {i} is not a mapping")
        hints.append(_hint(entry, base_dir, f"{uri}: entry {i}"))
    names = [h.name for h in hints]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise SourceError(f"{uri}: repository listed twice: {dup[0]}")
    return tuple(hints)


def merge_hints(hints: Iterable[RepoHint]) -> dict[str, RepoHint]:
    """Hints by repo name; a later hint fills only the fields an earlier one left empty."""
    out: dict[str, RepoHint] = {}
    for h in hints:
        old = out.get(h.name)
        if old is None:
            out[h.name] = h
            continue
        out[h.name] = RepoHint(
            name=h.name,
            uri=old.uri or h.uri,
            team=old.team or h.team,
            owner=old.owner or h.owner,
            environment=old.environment or h.environment,
            commit=old.commit or h.commit,
        )
    return out


def repo_of_jsonl(uri: str) -> str:
    """The repo a jsonl file stands for when its rows carry none: the file name without suffix."""
    name = uri.rstrip("/").rsplit("/", 1)[-1]
    for suffix in JSONL_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def spark_hides(name: str) -> bool:
    """Whether Spark's file listing drops an entry of this name (its `shouldFilterOutPathName`):
    `.x`, `_x` (unless `_x=...`, a partition folder), `*._COPYING_`, but not `_metadata*`."""
    drop = (name.startswith("_") and "=" not in name) or name.startswith(".") or name.endswith("._COPYING_")
    return drop and not name.startswith(("_metadata", "_common_metadata"))


def spark_hidden(base: str, uris: Iterable[str]) -> list[str]:
    """The entries below `base` that Spark's recursive listing of `base` drops (a hidden name on the way)."""
    prefix = base.rstrip("/") + "/"
    return [u for u in uris if u.startswith(prefix) and any(spark_hides(p) for p in u[len(prefix) :].split("/"))]


@dataclass(frozen=True)
class HiddenFile:
    """A file Spark's listing skips, found by the job's own listing; `read`: worth its content."""

    uri: str
    size: int
    read: bool


def hidden_files(
    base: str, mode: str, entries: Iterable[tuple[str, bool, int]], max_size: int, exclude_dirs: frozenset[str]
) -> list[HiddenFile]:
    """The files below `base` (entries: uri, is_dir, size) that Spark's listing of `base` drops.

    Their content is worth reading unless the scan would skip them anyway (too large, in a folder
    subguard never walks into, or in a hidden first-level folder of an organisation folder).
    """
    out: list[HiddenFile] = []
    prefix = base.rstrip("/") + "/"
    for uri, is_dir, size in entries:
        if is_dir or not uri.startswith(prefix):
            continue
        parts = uri[len(prefix) :].split("/")
        if not any(spark_hides(p) for p in parts):
            continue
        in_repo = parts[1:] if mode == "parent" else parts
        outside = mode == "parent" and (len(parts) == 1 or parts[0].startswith((".", "_")))
        excluded = any(d in exclude_dirs or d.endswith(".egg-info") for d in in_repo[:-1])
        out.append(HiddenFile(uri, size, size <= max_size and not excluded and not outside))
    return out
