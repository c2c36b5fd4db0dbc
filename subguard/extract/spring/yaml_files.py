"""Spring YAML documents flattened to dotted keys with line numbers (ruamel round-trip, safe).

`read_yaml(text)` returns one `Document` per YAML document: the flattened entries (`a.b[0].c`) and
the profile condition the document declares (`spring.config.activate.on-profile` or the legacy
`spring.profiles`). Broken YAML (tabs, duplicate keys, syntax errors) raises `YamlError` with a line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from subguard.core.yamlsafe import safe_yaml
from subguard.extract.spring.props import Entry


@dataclass(frozen=True)
class Document:
    """One YAML document: entries in order and the profiles it is restricted to ("" = always)."""

    entries: tuple[Entry, ...]
    on_profile: str = ""
    index: int = 0


class YamlError(ValueError):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


_PROFILE_KEYS = ("spring.config.activate.on-profile", "spring.profiles")
# A plain scalar that starts with a Maven resource-filtering token (`key: @project.version@`,
# `- @profile@`): `@` is a reserved indicator, so the file is YAML only after Maven filtered it.
_TOKEN_SCALAR = re.compile(
    r"^(?P<head>[ \t]*(?:-[ \t]+)*(?:[^\s#'\"\-@][^#]*?:[ \t]+(?:-[ \t]+)*)?)"
    r"(?P<value>@[A-Za-z_][A-Za-z0-9_.\-]*@(?:[^#\n]*?))(?P<tail>[ \t]*(?:[ \t]#.*)?)$",
    re.MULTILINE,
)


def quote_maven_tokens(text: str) -> str:
    """The text with every plain scalar that starts with an `@token@` single-quoted, so that it
    parses to the token text as written (same lines; the rest of such a line shifts by two columns)."""
    if "@" not in text:
        return text

    def sub(m: re.Match[str]) -> str:
        head = m.group("head")
        if not head.strip():  # a bare line (a continuation): not a value start
            return m.group(0)
        value = m.group("value").rstrip()
        return head + "'" + value.replace("'", "''") + "'" + m.group("value")[len(value) :] + m.group("tail")

    return _TOKEN_SCALAR.sub(sub, text)


def _scalar(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _key(parent: str, key: Any) -> str:
    text = _scalar(key)
    if text.startswith("[") and text.endswith("]"):  # Spring's bracket notation keeps dots in a key
        text = text[1:-1]
    return f"{parent}.{text}" if parent else text


def _pos(get: Any, arg: Any, line: int, column: int) -> tuple[int, int]:
    """0-based (line, column) from ruamel's `lc`; the parent's position for merged (`<<`) keys and
    tagged collections, which ruamel records no position for."""
    try:
        pos = get(arg)
    except (KeyError, IndexError, TypeError):
        pos = None
    return (int(pos[0]), int(pos[1])) if pos else (line - 1, column - 1)


def _flatten(node: Any, prefix: str, line: int, column: int, out: list[Entry]) -> None:
    if isinstance(node, CommentedMap):
        for key in node:
            kline, kcol = _pos(node.lc.key, key, line, column)
            vline, vcol = _pos(node.lc.value, key, line, column)
            child = node[key]
            if isinstance(child, (CommentedMap, CommentedSeq)):
                _flatten(child, _key(prefix, key), kline + 1, kcol + 1, out)
            else:
                _flatten(child, _key(prefix, key), vline + 1, vcol + 1, out)
        return
    if isinstance(node, CommentedSeq):
        for i, item in enumerate(node):
            iline, icol = _pos(node.lc.item, i, line, column)
            _flatten(item, f"{prefix}[{i}]", iline + 1, icol + 1, out)
        if prefix and len(node) and all(not isinstance(x, (CommentedMap, CommentedSeq)) for x in node):
            out.append(Entry(prefix, ",".join(_scalar(x) for x in node), line, column))
        return
    if prefix:
        out.append(Entry(prefix, _scalar(node), line, column))


def _profile_of(entries: list[Entry]) -> str:
    for key in _PROFILE_KEYS:
        for e in entries:
            if e.key == key:
                return e.value
    return ""


def read_yaml(text: str) -> list[Document]:
    """Every document of a Spring YAML file, flattened; raises YamlError on broken input.

    A file that is YAML only after Maven resource filtering (`@token@` values) is read with the
    tokens as written (quoted first); the config layer treats values holding them as unknown."""
    try:
        return _read_yaml(text)
    except YamlError:
        quoted = quote_maven_tokens(text)
        if quoted == text:
            raise
    return _read_yaml(quoted)


def _read_yaml(text: str) -> list[Document]:
    loader = safe_yaml("rt")  # depth and alias-expansion limits (billion laughs)
    loader.allow_duplicate_keys = False
    try:
        docs = list(loader.load_all(text))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = exc.problem or exc.context or "invalid YAML"
        raise YamlError(f"invalid YAML: {problem.strip()}", line) from None
    except YAMLError as exc:
        raise YamlError(f"invalid YAML: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", 1) from None
    except (ValueError, TypeError, RecursionError) as exc:  # scalar constructors: 2001-13-45, a 5000-digit int
        raise YamlError(
            f"invalid YAML value: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", 1
        ) from None
    out: list[Document] = []
    for index, doc in enumerate(docs):
        if doc is None:
            continue
        entries: list[Entry] = []
        _flatten(doc, "", 1, 1, entries)
        out.append(Document(tuple(entries), _profile_of(entries), index))
    return out
