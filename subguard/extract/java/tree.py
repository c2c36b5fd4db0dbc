"""Two tree-sitter helpers the Java reading code shares: a node's text and a pre-order walk."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node


def text(node: Node | None) -> str:
    """The node's source text ("" for no node)."""
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


def walk(node: Node) -> Iterator[Node]:
    """Every node under `node` (itself first), in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))
