"""A pure-Python ruamel loader with the YAML limits of `subguard.core.limits` (depth, alias
expansion, recursive aliases); its own module so that a run that reads no YAML never imports ruamel."""

from __future__ import annotations

import warnings
from typing import Any, Literal

from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer
from ruamel.yaml.error import MarkedYAMLError, ReusedAnchorWarning
from ruamel.yaml.events import AliasEvent
from ruamel.yaml.nodes import MappingNode, Node, SequenceNode
from ruamel.yaml.scanner import RoundTripScanner, Scanner

YAML_MAX_DEPTH = 100
YAML_MAX_ALIAS_EXPANSION = 100_000


class YamlLimitError(MarkedYAMLError):
    """A YAML document over a resource limit (too deep, alias bomb, recursive alias)."""


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def expanded_size(root: Node) -> tuple[int, int]:
    """(nodes after expanding every alias, distinct nodes); raises YamlLimitError on a recursive alias."""
    size: dict[int, int] = {}
    active: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            active.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in _children(node))
            continue
        if key in size:
            continue
        if key in active:
            raise YamlLimitError(None, None, "recursive alias (a node that contains itself)", node.start_mark)
        active.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in size)
    return size[id(root)], len(size)


class LimitedComposer(Composer):
    """ruamel's composer with a depth limit and an alias-expansion limit per document."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.depth >= YAML_MAX_DEPTH and not self.parser.check_event(AliasEvent):
            raise YamlLimitError(
                None, None, f"nested deeper than {YAML_MAX_DEPTH} levels", self.parser.peek_event().start_mark
            )
        return super().compose_node(parent, index)

    def compose_document(self) -> Any:
        with warnings.catch_warnings():  # a re-used anchor in a scanned file is its business, not our warning
            warnings.simplefilter("ignore", ReusedAnchorWarning)
            node = super().compose_document()
        if node is not None:
            expanded, distinct = expanded_size(node)
            if expanded - distinct > YAML_MAX_ALIAS_EXPANSION:
                raise YamlLimitError(
                    None,
                    None,
                    f"aliases expand to {expanded} nodes (limit: {YAML_MAX_ALIAS_EXPANSION} beyond the {distinct} written)",
                    node.start_mark,
                )
        return node


class _FlowDepthLimit:
    """Refuse `[`/`{` nested deeper than YAML_MAX_DEPTH while scanning.

    The pure scanner keeps one pending simple key per flow level and walks them all for every
    token, so deep flow nesting is quadratic well before the composer sees the depth.
    """

    flow_level: int
    reader: Any

    def fetch_flow_collection_start(self, TokenClass: Any, to_push: str) -> None:
        if self.flow_level >= YAML_MAX_DEPTH:
            raise YamlLimitError(None, None, f"nested deeper than {YAML_MAX_DEPTH} levels", self.reader.get_mark())
        super().fetch_flow_collection_start(TokenClass, to_push)  # type: ignore[misc]


class _LimitedScanner(_FlowDepthLimit, Scanner):
    pass


class _LimitedRoundTripScanner(_FlowDepthLimit, RoundTripScanner):
    pass


def safe_yaml(typ: Literal["safe", "rt"] = "safe") -> YAML:
    """A pure-Python ruamel loader that constructs data only and enforces the YAML limits above."""
    yaml = YAML(typ=typ, pure=True)
    yaml.Composer = LimitedComposer
    yaml.Scanner = _LimitedRoundTripScanner if typ == "rt" else _LimitedScanner
    return yaml
