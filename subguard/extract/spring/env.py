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

from subguard.core.model import Location, Resolution, Value
from subguard.extract.spring.props import Entry

BASE = ""
DEFAULT_PROFILE = "default"  # application-default.*: active exactly when no profile is
# Maven resource filtering with spring-boot-starter-parent's `@` delimiter: `@project.version@`
MAVEN_TOKEN = re.compile(r"@[A-Za-z_][A-Za-z0-9_.\-]*@")
_FILE = re.compile(r"^(application|bootstrap)(?:-([^.]+))?\.(yml|yaml|properties)$")
_ENV_STYLE = re.compile(r"^[A-Z0-9_]+$")


@dataclass(frozen=True)
class ConfigValue:
    """A config value as written (placeholders not yet resolved) and where it was written.

    `differs` is set on a shared module's key that the applications running it set differently
    (`app module: value` each, "(not set)" included): a placeholder of it stays unresolved."""

    value: str
    path: str
    line: int
    column: int
    key: str
    differs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Layer:
    """One YAML document or properties file; `on_profile` is the profile condition ("" = always)."""

    path: str
    on_profile: str
    rank: tuple[int, ...]
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


def layer_rank(path: str, doc_index: int) -> tuple[int, ...]:
    """Precedence of a file/document: higher ranks override lower ones. A profile's file beats every
    file without one; then a file in a `config/` folder (`classpath:/config/`, `./config/`) beats
    one beside it; then `.properties` beats `.yml`. A file imported by a document
    (`spring.config.import`) ranks just above it (see `imported_rank`)."""
    kind, profile, ext = config_file(path) or ("application", "", "yml")
    in_config = posixpath.basename(posixpath.dirname(path)) == "config"
    return (
        1 if kind == "application" else 0,
        1 if profile else 0,
        1 if in_config else 0,
        1 if ext == "properties" else 0,
        doc_index,
        0,
    )


def imported_rank(importer: tuple[int, ...], order: int, doc_index: int) -> tuple[int, ...]:
    """The rank of document `doc_index` of the `order`-th file a layer imports: above the importer
    (ConfigDataEnvironment: imported values override the file that imports them), below what
    follows it; a later import above an earlier one."""
    return (*importer[:-1], importer[-1] * 100 + 1 + order * 10 + min(doc_index, 9))


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
    if file_profile == DEFAULT_PROFILE:  # the implicit default profile: only when none is active
        if profile:
            return False
    elif file_profile and file_profile != profile:
        return False
    return not layer.on_profile or _matches(layer.on_profile, profile)


def profiles(layers: tuple[Layer, ...]) -> tuple[str, ...]:
    """Named profiles a module's config knows (from file names and positive document conditions)."""
    found: list[str] = []
    for layer in layers:
        _, file_profile, _ = config_file(layer.path) or ("", "", "")
        names = [file_profile] + [t.strip() for t in re.split(r"[,|]", layer.on_profile) if t.strip()]
        for name in names:
            if name and not name.startswith("!") and name != DEFAULT_PROFILE and name not in found:
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

    `value` is None when some placeholder has neither a config value nor a default (`missing`), or
    when a config value it uses holds a Maven resource-filtering token (`filtered`, such a key is
    also in `missing`). `text` is what Spring's binder makes of the text when nothing outside the
    files sets the missing keys: unresolvable placeholders kept as written
    (PropertySourcesPlaceholdersResolver ignores them). `keys` are the placeholder keys used;
    `source` is the config entry of the outermost placeholder when the whole text is a single
    placeholder that a config value answered.
    """

    value: str | None
    keys: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    source: ConfigValue | None = None
    defaulted: tuple[str, ...] = ()
    text: str = ""
    filtered: tuple[str, ...] = ()
    differs: tuple[str, ...] = ()  # keys a shared module's applications set differently, with their values


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
        return Resolved(None, missing=("<placeholder cycle>",), text=text)
    out: list[str] = []
    raw: list[str] = []
    keys: list[str] = []
    missing: list[str] = []
    defaulted: list[str] = []
    filtered: list[str] = []
    conflicts: list[str] = []
    source: ConfigValue | None = None
    i = 0
    while i < len(text):
        start = text.find("${", i)
        if start < 0:
            out.append(text[i:])
            raw.append(text[i:])
            break
        out.append(text[i:start])
        raw.append(text[i:start])
        end = _find_close(text, start)
        if end < 0:
            out.append(text[start:])
            raw.append(text[start:])
            break
        key_text, default = _split_default(text[start + 2 : end])
        key_res = resolve(key_text, config, _depth + 1)
        key = key_res.value if key_res.value is not None else key_text
        keys.append(key)
        found = config.get(canonical(key))
        inner: Resolved | None = None
        if found is not None and found.differs:
            missing.append(key)
            conflicts.append(f"{key} ({'; '.join(found.differs)})")
            raw.append(text[start : end + 1])
        elif found is not None:
            inner = resolve(found.value, config, _depth + 1)
            tokens = MAVEN_TOKEN.findall(found.value)
            if tokens:
                filtered.extend(tokens)
                missing.append(key)
            if start == 0 and end == len(text) - 1:
                source = found
        elif default is not None:
            inner = resolve(default, config, _depth + 1)
            defaulted.append(key)
        else:
            missing.append(key)
            raw.append(text[start : end + 1])
        if inner is not None:
            keys.extend(inner.keys)
            missing.extend(inner.missing)
            filtered.extend(inner.filtered)
            conflicts.extend(inner.differs)
            out.append(inner.value if inner.value is not None else "")
            raw.append(inner.text)
        i = end + 1
    value = None if missing else "".join(out)
    return Resolved(
        value, tuple(keys), tuple(missing), source, tuple(defaulted), "".join(raw), tuple(filtered), tuple(conflicts)
    )


def maven_tokens(text: str) -> list[str]:
    """The Maven resource-filtering tokens (`@name@`) of a config value."""
    return MAVEN_TOKEN.findall(text) if "@" in text else []


def filtered_reason(key: str, tokens: list[str] | tuple[str, ...]) -> str:
    names = ", ".join(dict.fromkeys(tokens))
    return (
        f"{key}: {names} is filled in by Maven resource filtering at build time "
        "(spring-boot-starter-parent's @..@ delimiter), so the value is not in the source"
    )


def config_text_value(
    text: str, config: Mapping[str, ConfigValue], location: Location | None, key: str = "", where: str = ""
) -> Value:
    """A config text as Spring binds it, as a `Value` (the API both config and code extractors use):

    - no placeholder and no Maven token: the literal;
    - a `@token@` of Maven resource filtering, in the text or in a value a placeholder uses: unknown;
    - every placeholder answered (or defaulted): the resolved text, PLACEHOLDER, the keys in `detail`;
    - some placeholder unresolvable: the text as Spring binds it (the unresolved `${...}` kept as
      written), PLACEHOLDER, with the unresolved keys in `detail`: the environment (variables,
      system properties, command line, a config server) may still set them at run time.
    """
    label = f"{key}: " if key else ""
    own = maven_tokens(text)
    if own:
        return Value.unknown(filtered_reason(key or text, own), location)
    if "${" not in text:
        return Value(value=text, resolution=Resolution.LITERAL, detail=key, location=location)
    res = resolve(text, config)
    if res.filtered:
        return Value.unknown(filtered_reason(",".join(dict.fromkeys(res.missing)), res.filtered), location)
    loc = location
    if res.source is not None and res.value is not None:
        loc = Location(path=res.source.path, line=res.source.line, column=res.source.column)
    if res.value is not None:
        detail = ",".join(res.keys) + (f" (default used for {','.join(res.defaulted)})" if res.defaulted else "")
        return Value(value=res.value, resolution=Resolution.PLACEHOLDER, detail=detail, location=loc)
    if res.differs:
        return Value.unknown(
            f"{label}the applications that run this shared module set {', '.join(res.differs)}", location
        )
    unresolved = ", ".join(f"${{{k}}}" for k in dict.fromkeys(res.missing))
    detail = (
        f"{label}unresolved {unresolved}: not set in the Spring config{where}; Spring binds the text as written "
        f"unless the environment sets it at run time (keys: {','.join(dict.fromkeys(res.keys))})"
    )
    return Value(value=res.text, resolution=Resolution.PLACEHOLDER, detail=detail, location=loc)
