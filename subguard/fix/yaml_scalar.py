"""YAML files through ruamel.yaml's round-trip parser: the scalar node of a value is found by its
marks, and only that scalar's characters are replaced, in its own style (plain, single- or
double-quoted), so comments, key order, quoting and indentation stay as written. The edited file is
parsed again and the scalar must read back as the new value."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from subguard.fix.model import Slice
from subguard.fix.source import Source

LANG = "yaml"
_PLAIN = re.compile(r"[A-Za-z0-9_.\-/]([A-Za-z0-9_.\-/| ]*[A-Za-z0-9_.\-/|])?")


def _compose(text: str) -> list[Node] | None:
    try:
        return list(YAML(typ="rt").compose_all(io.StringIO(text)))
    except (YAMLError, RecursionError, ValueError):
        return None


def _scalars(docs: list[Node]) -> Iterator[ScalarNode]:
    stack: list[Node] = list(docs)
    seen: set[int] = set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, ScalarNode):
            yield n
        elif isinstance(n, MappingNode):
            stack.extend(x for pair in n.value for x in pair)
        elif isinstance(n, SequenceNode):
            stack.extend(n.value)


def scalar_at(src: Source, line: int, column: int) -> ScalarNode | None:
    docs = _compose(src.text)
    if docs is None:
        return None
    for n in _scalars(docs):
        if n.start_mark.line == line - 1 and n.start_mark.column == column - 1:
            return n
    return None


def literal_at(src: Source, line: int, column: int, value: str) -> Slice | None:
    """The scalar that starts at (line, column), when it reads as `value` and is not a block scalar."""
    n = scalar_at(src, line, column)
    if n is None or n.value != value or n.style in ("|", ">"):
        return None
    start, end = n.start_mark.index, n.end_mark.index
    if decode(n.style or "", src.text[start:end]) != value:
        return None
    return Slice(LANG, start, end, n.style or "")


def decode(style: str, source: str) -> str | None:
    del style
    docs = _compose(f"k: {source}\n")
    if not docs or not isinstance(docs[0], MappingNode) or len(docs[0].value) != 1:
        return None
    node = docs[0].value[0][1]
    return node.value if isinstance(node, ScalarNode) and isinstance(node.value, str) else None


def encode(style: str, value: str) -> str | None:
    """`value` as a scalar of the same style; a plain scalar that cannot hold it is single-quoted."""
    if style == '"':
        return json.dumps(value, ensure_ascii=False)
    if style == "" and _PLAIN.fullmatch(value) and " #" not in value and decode("", value) == value:
        return value
    if "\n" in value:
        return None
    return "'" + value.replace("'", "''") + "'"


def check(text: str, before: str) -> str | None:
    del before
    return None if _compose(text) is not None else "the fixed file is not valid YAML"
