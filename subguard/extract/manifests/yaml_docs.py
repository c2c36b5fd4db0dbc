"""Safe multi-document YAML loading with line numbers, and typed accessors over the loaded data.

The round-trip loader is used for its line information; it builds plain mappings, sequences and
scalars only (unknown tags stay inert data, nothing is instantiated).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from subguard.core.yamlsafe import safe_yaml

# a line that starts or ends a document (YAML forbids either at the start of a line of content)
_DOC_MARK = re.compile(r"(?:---|\.\.\.)(?:[ \t]|$)")
_BARE_MARK = re.compile(r"(?:---|\.\.\.)[ \t]*(?:#.*)?")
# a document's top-level kind, in block style: a CustomResourceDefinition is the schema of a custom
# resource (an OpenAPI document, often megabytes), never a workload, a ConfigMap or a compose file
SCHEMA_KIND = "CustomResourceDefinition"
_SCHEMA_LINE = re.compile(r"kind:[ \t]*([\"']?)CustomResourceDefinition\1[ \t]*(?:#.*)?")


def without_schemas(text: str) -> tuple[str, int]:
    """`text` with each document whose top-level `kind` is `CustomResourceDefinition` left blank (its
    lines kept, empty, so every other document keeps its line numbers), and how many were. A
    document that starts on its `---` line, a flow-style one, or a file with lone-CR line breaks is
    left as it is: the loader reads it."""
    if SCHEMA_KIND not in text or "\r" in text.replace("\r\n", ""):  # lone CRs: line breaks of their own
        return text, 0
    lines = text.split("\n")
    out: list[str] = []
    doc: list[str] = []
    bare = True  # the document began at the start of the file or after a bare marker
    blanked = 0

    def flush() -> None:
        nonlocal blanked
        if bare and any(_SCHEMA_LINE.fullmatch(line.removesuffix("\r")) for line in doc):
            out.extend("" for _ in doc)
            blanked += 1
        else:
            out.extend(doc)
        doc.clear()

    for line in lines:
        content = line.removesuffix("\r")
        if _DOC_MARK.match(content):
            flush()
            out.append(line)
            bare = _BARE_MARK.fullmatch(content) is not None
        else:
            doc.append(line)
    flush()
    return "\n".join(out), blanked


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
