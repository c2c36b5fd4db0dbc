"""Config files a module's Spring config names besides `application*` / `bootstrap*`.

Spring Boot's ConfigDataEnvironment loads what `spring.config.import` names, and imported values
override the document that imports them (StandardConfigDataLocationResolver: `optional:` prefix,
`classpath:` from the module's resources, `file:` from the working directory, a location without a
prefix relative to the importing file; a location ending in `/` is a directory, whose
`application.*` files are already layers of the module). Spring Cloud Alibaba and Apollo add their
own locations: `nacos:<data-id>[?group=..]` and `apollo://<namespace>`; the config lives in the
config server, and a file of the repo named like the data-id (`nacos/DEFAULT_GROUP/mq.yaml`, a
checked-in export) is read as that config. Nacos's bootstrap-style `shared-configs` /
`extension-configs` data-ids and Apollo's `apollo.bootstrap.namespaces` name them too.

`spring.config.location` / `additional-location` are honoured only by Spring when the environment
sets them (command line, variables); written in a config file they are read here the same way as
an import (a file the team means to load, which the linter would otherwise never see).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import replace

from subguard.core.model import FileRecord, FileStatus
from subguard.extract.base import RepoContext
from subguard.extract.spring.env import DEFAULT_PROFILE, Layer, canonical, config_file, imported_rank, resolve, view

_EXTS = (".yml", ".yaml", ".properties")
_MAX_DEPTH = 4
_LIST_KEYS = {
    canonical(k)
    for k in (
        "spring.config.import",
        "spring.config.location",
        "spring.config.additional-location",
        "apollo.bootstrap.namespaces",
        "spring.cloud.nacos.config.shared-dataids",
        "spring.cloud.nacos.config.ext-config",
    )
}
_DATA_ID = re.compile(r"^spring\.cloud\.nacos\.config\.(?:sharedconfigs|extensionconfigs|extconfig)\[\d+\]\.dataid$")
_INDEXED = re.compile(r"^(.*)\[\d+\]$")
_NACOS_KEYS = {canonical("spring.cloud.nacos.config.shared-dataids"), canonical("spring.cloud.nacos.config.ext-config")}
_APOLLO_KEY = canonical("apollo.bootstrap.namespaces")
Parse = Callable[[str, bytes], object]


def _named(layer: Layer) -> list[tuple[str, str]]:
    """(kind, location text) for every location a layer names, in order; kind is "spring",
    "nacos" (a data-id) or "apollo" (a namespace)."""
    out: list[tuple[str, str]] = []
    joined = {canonical(e.key) for e in layer.entries}
    for e in layer.entries:
        key = canonical(e.key)
        m = _INDEXED.match(key)
        if m is not None and m.group(1) in _LIST_KEYS and m.group(1) in joined:
            continue  # a YAML list is also flattened to its joined key
        base = m.group(1) if m is not None else key
        if _DATA_ID.match(key):
            out.append(("nacos", e.value.strip()))
        elif base in _LIST_KEYS:
            kind = "nacos" if base in _NACOS_KEYS else "apollo" if base == _APOLLO_KEY else "spring"
            out.extend((kind, part.strip()) for part in e.value.split(",") if part.strip())
    return out


def _resources_root(path: str, module: str) -> str:
    marker = "/src/main/resources/"
    padded = f"/{path}"
    if marker in padded:
        return padded[1 : padded.index(marker) + len(marker) - 1]
    return posixpath.join(module, "src/main/resources") if module else "src/main/resources"


def _clean(path: str) -> str:
    norm = posixpath.normpath(path.lstrip("/")) if path else ""
    return "" if norm in (".", "") or norm.startswith("..") else norm


class Importer:
    """Expands a module's layers with the layers of the files they name (see the module doc)."""

    def __init__(self, repo: RepoContext, name: str, parse: Parse) -> None:
        self._repo = repo
        self._name = name
        self._parse = parse
        self._loaded: dict[str, tuple[Layer, ...] | None] = {}
        self._failed: dict[str, str] = {}
        self._by_base: dict[str, list[str]] | None = None

    def expand(self, module: str, layers: list[Layer]) -> list[Layer]:
        if not any(_named(x) for x in layers):
            return layers
        out = list(layers)
        todo = [(x, 0) for x in layers]
        seen = {x.path for x in layers}
        while todo:
            layer, depth = todo.pop(0)
            for order, (kind, text) in enumerate(_named(layer)):
                path = self._locate(kind, text, layer, module, out)
                if path is None or path in seen or depth >= _MAX_DEPTH:
                    continue
                seen.add(path)
                for i, found in enumerate(self._load(path)):
                    added = replace(
                        found,
                        on_profile=_condition(layer) or found.on_profile,
                        rank=imported_rank(layer.rank, order, i),
                    )
                    out.append(added)
                    todo.append((added, depth + 1))
        return out

    def records(self, given: set[str]) -> list[FileRecord]:
        """A record for every file loaded because a config file named it (not given to the extractor)."""
        out: list[FileRecord] = []
        for path, layers in sorted(self._loaded.items()):
            if path in given:
                continue
            if layers is None and path in self._failed:
                out.append(
                    FileRecord(path=path, status=FileStatus.FAILED, reason=self._failed[path], extractor=self._name)
                )
            elif layers is not None:
                out.append(
                    FileRecord(
                        path=path,
                        status=FileStatus.PARSED,
                        reason="loaded: a Spring config file imports it",
                        extractor=self._name,
                    )
                )
        return out

    def _load(self, path: str) -> tuple[Layer, ...]:
        if path not in self._loaded:
            data = self._repo.read(path)
            parsed = (
                self._repo.memo(self._name, path, data, lambda: self._parse(path, data)) if data is not None else None
            )
            if isinstance(parsed, tuple):
                self._loaded[path] = parsed
            else:
                self._loaded[path] = None
                if parsed is not None:
                    self._failed[path] = (
                        f"line {getattr(parsed, 'line', 1)}: {getattr(parsed, 'reason', 'could not be parsed')}"
                    )
        return self._loaded[path] or ()

    def _locate(self, kind: str, text: str, layer: Layer, module: str, layers: list[Layer]) -> str | None:
        text = text.removeprefix("optional:").strip()
        if "${" in text:  # `nacos:${spring.application.name}.yaml`: from the module's base config
            resolved = resolve(text, view(tuple(layers), "")).value
            if resolved is None:
                return None
            text = resolved
        if kind == "spring" and text.startswith("nacos:"):
            kind, text = "nacos", text[len("nacos:") :]
        elif kind == "spring" and text.startswith("apollo://"):
            kind, text = "apollo", text[len("apollo://") :]
        if kind == "nacos":
            data_id, _, query = text.partition("?")
            group = dict(p.partition("=")[::2] for p in query.split("&") if p).get("group", "")
            return self._by_name(data_id.strip(), group, module)
        if kind == "apollo":
            ns = text.strip()
            return self._by_name(ns if ns.endswith(_EXTS) else ns + ".properties", "", module)
        if (
            not text
            or text.endswith("/")
            or "*" in text
            or ":" in text.partition("?")[0].replace("classpath:", "").replace("file:", "")
        ):
            return None  # a directory, a pattern, or another ConfigDataLocationResolver (configtree:, configserver:)
        if text.startswith(("classpath:", "classpath*:")):
            candidates = [posixpath.join(_resources_root(layer.path, module), text.partition(":")[2].lstrip("/"))]
        elif text.startswith("file:"):
            rel = text[len("file:") :]
            candidates = [posixpath.join(module, rel), rel, posixpath.join(posixpath.dirname(layer.path), rel)]
        else:
            candidates = [posixpath.join(posixpath.dirname(layer.path), text)]
        for c in candidates:
            cleaned = _clean(c)
            if cleaned and cleaned in self._repo.paths and cleaned.endswith(_EXTS):
                return cleaned
        return None

    def _by_name(self, name: str, group: str, module: str) -> str | None:
        """The repo file named like a Nacos data-id / Apollo namespace: one in a folder named like
        the group first, then the one nearest the module; None when there is none."""
        if not name or "/" in name:
            return None
        if self._by_base is None:
            self._by_base = {}
            for p in self._repo.paths:
                if p.endswith(_EXTS) and "/src/test/" not in f"/{p}":
                    self._by_base.setdefault(posixpath.basename(p), []).append(p)
        names = [name] if name.endswith(_EXTS) else [name + ext for ext in _EXTS]
        found = sorted({p for n in names for p in self._by_base.get(n, ())})
        if not found:
            return None
        if group:
            grouped = [p for p in found if group in p.split("/")[:-1]]
            found = grouped or found
        return max(found, key=lambda p: (_shared_prefix(p, module), -len(p), p))


def _shared_prefix(path: str, module: str) -> int:
    a, b = path.split("/")[:-1], [s for s in module.split("/") if s]
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _condition(layer: Layer) -> str:
    """The profile condition an imported file inherits from the layer that imports it."""
    if layer.on_profile:
        return layer.on_profile
    _, profile, _ = config_file(layer.path) or ("", "", "")
    return profile if profile and profile != DEFAULT_PROFILE else ("default" if profile else "")
