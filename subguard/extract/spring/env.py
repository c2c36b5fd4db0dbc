"""Spring's view of a module's config: relaxed binding, profile layering and `${key:default}` resolution.

A module's config files become `Layer`s (one per YAML document or properties file). `view(layers,
profile)` stacks the layers that apply to a profile in Spring's precedence order (bootstrap below
application, base below profile-specific, yml below properties, later documents above earlier ones)
into one map from canonical key to `ConfigValue`. Profile "" is the base (Spring's "default").
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass

from subguard.extract.spring.props import Entry

BASE = ""
_FILE = re.compile(r"^(application|bootstrap)(?:-([^.]+))?\.(yml|yaml|properties)$")
_ENV_STYLE = re.compile(r"^[A-Z0-9_]+$")


@dataclass(frozen=True)
class ConfigValue:
    """A config value as written (placeholders not yet resolved) and where it was written."""

    value: str
    path: str
    line: int
    column: int
    key: str


@dataclass(frozen=True)
class Layer:
    """One YAML document or properties file; `on_profile` is the profile condition ("" = always)."""

    path: str
    on_profile: str
    rank: tuple[int, int, int, int]
    entries: tuple[Entry, ...]


def config_file(path: str) -> tuple[str, str, str] | None:
    """(kind, profile, extension) for a Spring config file name, else None."""
    m = _FILE.match(posixpath.basename(path))
    if m is None:
        return None
    return m.group(1), m.group(2) or "", m.group(3)


def canonical(key: str) -> str:
    """Relaxed-binding form: lower case, `-`/`_` dropped per segment; env style `A_B` means `a.b`."""
    if _ENV_STYLE.match(key) and any(c.isalpha() for c in key):
        return ".".join(seg.lower() for seg in key.split("_") if seg)
    return ".".join(seg.replace("-", "").replace("_", "").lower() for seg in key.split("."))


def layer_rank(path: str, doc_index: int) -> tuple[int, int, int, int]:
    """Precedence of a file/document: higher ranks override lower ones."""
    kind, profile, ext = config_file(path) or ("application", "", "yml")
    return (1 if kind == "application" else 0, 1 if profile else 0, 1 if ext == "properties" else 0, doc_index)


def _matches(condition: str, profile: str) -> bool:
    active = profile or "default"
    tokens = [t.strip() for t in re.split(r"[,|]", condition) if t.strip()]
    for token in tokens:
        if token.startswith("!"):
            if token[1:].strip() != active:
                return True
        elif token == active:
            return True
    return False


def applies(layer: Layer, profile: str) -> bool:
    """Does the layer contribute to `profile`'s view? (file-name profile and document condition)"""
    _, file_profile, _ = config_file(layer.path) or ("", "", "")
    if file_profile and file_profile != profile:
        return False
    return not layer.on_profile or _matches(layer.on_profile, profile)


def profiles(layers: tuple[Layer, ...]) -> tuple[str, ...]:
    """Named profiles a module's config knows (from file names and positive document conditions)."""
    found: list[str] = []
    for layer in layers:
        _, file_profile, _ = config_file(layer.path) or ("", "", "")
        names = [file_profile] + [t.strip() for t in re.split(r"[,|]", layer.on_profile) if t.strip()]
        for name in names:
            if name and not name.startswith("!") and name != "default" and name not in found:
                found.append(name)
    return tuple(found)


def view(layers: tuple[Layer, ...], profile: str) -> dict[str, ConfigValue]:
    """The merged config a profile sees: canonical key -> value, highest precedence wins."""
    out: dict[str, ConfigValue] = {}
    for layer in sorted((x for x in layers if applies(x, profile)), key=lambda x: x.rank):
        for e in layer.entries:
            out[canonical(e.key)] = ConfigValue(e.value, layer.path, e.line, e.column, e.key)
    return out


@dataclass(frozen=True)
class Resolved:
    """The result of resolving a text with placeholders.

    `value` is None when some placeholder has neither a config value nor a default (`missing`).
    `keys` are the placeholder keys used; `source` is the config entry of the outermost placeholder
    when the whole text is a single placeholder that a config value answered.
    """

    value: str | None
    keys: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    source: ConfigValue | None = None
    defaulted: tuple[str, ...] = ()


def has_placeholder(text: str) -> bool:
    return "${" in text


def _find_close(text: str, start: int) -> int:
    depth = 0
    i = start
    while i < len(text):
        if text.startswith("${", i):
            depth += 1
            i += 2
            continue
        if text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _split_default(body: str) -> tuple[str, str | None]:
    depth = 0
    for i, ch in enumerate(body):
        if body.startswith("${", i):
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == ":" and depth == 0:
            return body[:i], body[i + 1 :]
    return body, None


def resolve(text: str, config: Mapping[str, ConfigValue], _depth: int = 0) -> Resolved:
    """Resolve `${key}` / `${key:default}` (nested, recursive through config values) like Spring."""
    if _depth > 16:
        return Resolved(None, missing=("<placeholder cycle>",))
    out: list[str] = []
    keys: list[str] = []
    missing: list[str] = []
    defaulted: list[str] = []
    source: ConfigValue | None = None
    i = 0
    while i < len(text):
        start = text.find("${", i)
        if start < 0:
            out.append(text[i:])
            break
        out.append(text[i:start])
        end = _find_close(text, start)
        if end < 0:
            out.append(text[start:])
            break
        key_text, default = _split_default(text[start + 2 : end])
        key_res = resolve(key_text, config, _depth + 1)
        key = key_res.value if key_res.value is not None else key_text
        keys.append(key)
        found = config.get(canonical(key))
        if found is not None:
            inner = resolve(found.value, config, _depth + 1)
            keys.extend(inner.keys)
            missing.extend(inner.missing)
            out.append(inner.value if inner.value is not None else "")
            if start == 0 and end == len(text) - 1:
                source = found
        elif default is not None:
            inner = resolve(default, config, _depth + 1)
            keys.extend(inner.keys)
            missing.extend(inner.missing)
            defaulted.append(key)
            out.append(inner.value if inner.value is not None else "")
        else:
            missing.append(key)
        i = end + 1
    value = None if missing else "".join(out)
    return Resolved(value, tuple(keys), tuple(missing), source, tuple(defaulted))
