"""Tree-sitter helpers the Java reading code shares: a node's text, a pre-order walk, and the nodes
of some types under a node (found by a query, in C, in the walk's order)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import tree_sitter_java
from tree_sitter import Language, Node, Query, QueryCursor


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


@lru_cache(maxsize=1)
def language() -> Language:
    """The Java grammar."""
    return Language(tree_sitter_java.language())


@lru_cache(maxsize=16)
def _query(types: frozenset[str]) -> Query:
    return Query(language(), "[" + " ".join(f"({t})" for t in sorted(types)) + "] @n")


def typed(node: Node, types: frozenset[str]) -> list[Node]:
    """The nodes under `node` (itself included) whose type is one of `types`, in `walk`'s order (an
    enclosing node before the nodes within it): what filtering `walk` by type gives, without
    visiting every node in Python."""
    found = QueryCursor(_query(types)).captures(node).get("n", [])
    return sorted(found, key=lambda n: (n.start_byte, -n.end_byte))
