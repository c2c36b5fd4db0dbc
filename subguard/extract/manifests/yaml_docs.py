"""Safe multi-document YAML loading with line numbers, and typed accessors over the loaded data.

The round-trip loader is used for its line information; it builds plain mappings, sequences and
scalars only (unknown tags stay inert data, nothing is instantiated).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from subguard.core.yamlsafe import safe_yaml


class YamlFailure(Exception):
    """A document that cannot be parsed; `line` is 1-based."""

    def __init__(self, reason: str, line: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


@dataclass(frozen=True)
class Document:
    data: Any
    line: int  # 1-based line of the document's first node


def _loader() -> YAML:
    yaml = safe_yaml("rt")  # depth and alias-expansion limits (billion laughs)
    yaml.allow_duplicate_keys = True
    return yaml


def load_documents(text: str) -> tuple[list[Document], YamlFailure | None]:
    """All documents up to the first error, and that error (None when the whole file parsed)."""
    docs: list[Document] = []
    try:
        for data in _loader().load_all(text):
            if data is not None:
                docs.append(Document(data, node_line(data, 1)))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        return docs, YamlFailure(f"invalid YAML: {exc.problem or exc.context or 'parse error'}", line)
    except (YAMLError, ValueError, TypeError, RecursionError) as exc:
        return docs, YamlFailure(
            f"invalid YAML: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", 1
        )
    return docs, None


def node_line(node: Any, default: int) -> int:
    """1-based line where a mapping or sequence starts."""
    lc = getattr(node, "lc", None)
    line = getattr(lc, "line", None) if lc is not None else None
    return line + 1 if isinstance(line, int) else default


def key_line(node: Any, key: Any, default: int) -> int:
    """1-based line of `key` inside a mapping (falls back to `default`)."""
    lc = getattr(node, "lc", None)
    if lc is None:
        return default
    try:
        pos = lc.key(key)
    except (KeyError, TypeError, AttributeError):
        return default
    return int(pos[0]) + 1 if pos else default  # None when the mapping has no positions


def item_line(node: Any, index: int, default: int) -> int:
    """1-based line of a sequence item."""
    lc = getattr(node, "lc", None)
    if lc is None:
        return default
    try:
        pos = lc.item(index)
    except (KeyError, IndexError, TypeError, AttributeError):
        return default
    return int(pos[0]) + 1 if pos else default


def as_map(value: Any) -> dict[str, Any]:
    """The value if it is a mapping with string keys (other keys dropped), else empty."""
    if isinstance(value, dict):
        return (
            value if all(isinstance(k, str) for k in value) else {k: v for k, v in value.items() if isinstance(k, str)}
        )
    return {}


def as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def as_str(value: Any) -> str | None:
    """Scalars as text (YAML 1.2 booleans and numbers included); None for collections and null."""
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
