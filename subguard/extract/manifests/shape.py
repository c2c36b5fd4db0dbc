"""Structural checks of Kubernetes workloads and Compose services: the nodes the extractor reads must
have the YAML type the API server (or `docker compose`) requires (`spec` a mapping, `containers` a
list of mappings, `env` a list; a service a mapping, its `environment` a mapping or a list, ...).

A workload with a wrong-typed node would be rejected by the cluster and cannot be read reliably, so
the extractor reads none of it and records each `Malformed` node (line, field, what was found) as
a failure of its file (SG901). An absent or null node is not wrong: patches and partial manifests
(kustomize) leave out what they do not change.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from subguard.extract.manifests.k8s import POD_SPEC_PATHS, is_list_kind
from subguard.extract.manifests.yaml_docs import as_map, as_str, item_line, key_line, node_line

MAPPING, LIST, SCALAR = "a mapping", "a list", "a str"
MAPPING_OR_LIST, SCALAR_OR_LIST, SCALAR_OR_MAPPING = "a mapping or a list", "a str or a list", "a str or a mapping"
_CONTAINER_LISTS = ("env", "envFrom", "volumeMounts")  # lists of mappings
_CONTAINER_WORDS = ("command", "args")  # a list of scalars (one scalar is read as one word)


@dataclass(frozen=True)
class Malformed:
    """One node of a workload (or `List`) whose YAML type is not the required one."""

    line: int  # 1-based line of the node (its key, or its item in a sequence)
    field: str  # from the document root, e.g. `spec.template.spec.containers[0].env`
    found: str  # `a str`, `an int`, `a mapping`, `null`
    expected: str  # MAPPING, LIST or SCALAR
    workload: str = ""  # `Deployment 'web'`

    @property
    def reason(self) -> str:
        return f"line {self.line}: {self.workload}: {self.field} is {self.found}, expected {self.expected}"


def describe(value: Any) -> str:
    """`a str`, `an int`, `a mapping`, `a list`, `null`: the YAML type of a loaded value."""
    if value is None:
        return "null"
    name = (
        "bool"
        if isinstance(value, bool)
        else "mapping"
        if isinstance(value, dict)
        else "list"
        if isinstance(value, list)
        else "int"
        if isinstance(value, int)
        else "float"
        if isinstance(value, float)
        else "str"
        if isinstance(value, str)
        else type(value).__name__
    )
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _seq(value: Any) -> list[Any]:
    """The sequence itself (not `as_list`'s copy: its items' positions are needed), else empty."""
    return value if isinstance(value, list) else []


def _fits(value: Any, expected: str) -> bool:
    scalar = value is not None and not isinstance(value, (dict, list))
    return {
        MAPPING: isinstance(value, dict),
        LIST: isinstance(value, list),
        SCALAR: scalar,
        MAPPING_OR_LIST: isinstance(value, (dict, list)),
        SCALAR_OR_LIST: scalar or isinstance(value, list),
        SCALAR_OR_MAPPING: scalar or isinstance(value, dict),
    }[expected]


def _key(node: dict[Any, Any], key: str, field: str, expected: str, default: int) -> list[Malformed]:
    """`node[key]` when it is present, not null and not of the expected type."""
    value = node.get(key)
    if value is None or _fits(value, expected):
        return []
    return [Malformed(key_line(node, key, default), field, describe(value), expected)]


def _items(seq: list[Any], field: str, expected: str, default: int) -> list[Malformed]:
    return [
        Malformed(item_line(seq, i, default), f"{field}[{i}]", describe(v), expected)
        for i, v in enumerate(seq)
        if not _fits(v, expected)
    ]


def _list_of(node: dict[Any, Any], key: str, field: str, item: str, default: int) -> list[Malformed]:
    """A list-valued key: the key itself, else each of its items."""
    return _key(node, key, field, LIST, default) or _items(
        _seq(node.get(key)), field, item, key_line(node, key, default)
    )


def _container(c: dict[Any, Any], field: str, default: int) -> list[Malformed]:
    line = node_line(c, default)
    out = [p for key in _CONTAINER_LISTS for p in _list_of(c, key, f"{field}.{key}", MAPPING, line)]
    for key in _CONTAINER_WORDS:
        value = c.get(key)
        if isinstance(value, dict):
            out.append(Malformed(key_line(c, key, line), f"{field}.{key}", describe(value), LIST))
        else:
            out.extend(_items(_seq(value), f"{field}.{key}", SCALAR, key_line(c, key, line)))
    return out


def _pod(pod: dict[Any, Any], field: str, default: int) -> list[Malformed]:
    line = node_line(pod, default)
    out = _list_of(pod, "volumes", f"{field}.volumes", MAPPING, line)
    out += _list_of(pod, "containers", f"{field}.containers", MAPPING, line)
    containers = _seq(pod.get("containers"))
    for i, c in enumerate(containers):
        if isinstance(c, dict):
            out += _container(c, f"{field}.containers[{i}]", item_line(containers, i, line))
    return out


def _pod_spec(doc: dict[Any, Any], path: tuple[str, ...], default: int) -> list[Malformed]:
    """The nodes from the document down to the pod spec, then the pod spec itself."""
    node, field = doc, ""
    for key in path:
        field = f"{field}.{key}" if field else key
        wrong = _key(node, key, field, MAPPING, node_line(node, default))
        if wrong or node.get(key) is None:
            return wrong
        node = node[key]
    return _pod(node, field, default) if path else []


def _claim_templates(doc: dict[Any, Any], default: int) -> list[Malformed]:
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return []
    line = key_line(doc, "spec", default)
    out = _list_of(spec, "volumeClaimTemplates", "spec.volumeClaimTemplates", MAPPING, line)
    templates = _seq(spec.get("volumeClaimTemplates"))
    for i, t in enumerate(templates):
        if isinstance(t, dict):
            out += _key(
                t, "metadata", f"spec.volumeClaimTemplates[{i}].metadata", MAPPING, item_line(templates, i, line)
            )
    return out


def _label(doc: dict[str, Any], kind: str) -> str:
    name = as_str(as_map(doc.get("metadata")).get("name"))
    return f"{kind} '{name}'" if name else f"{kind} (unnamed)"


def _named(doc: dict[str, Any], kind: str, found: list[Malformed]) -> tuple[Malformed, ...]:
    label = _label(doc, kind)
    return tuple(replace(p, workload=label) for p in sorted(found, key=lambda p: p.line))


def workload_problems(doc: Any, default_line: int) -> tuple[Malformed, ...]:
    """Every wrong-typed node a workload document's extraction reads, by line (empty: well-formed)."""
    m = as_map(doc)
    kind = as_str(m.get("kind")) or ""
    line = node_line(m, default_line)
    found = _key(m, "metadata", "metadata", MAPPING, line)
    found += _pod_spec(m, POD_SPEC_PATHS.get(kind, ()), line)
    if kind == "StatefulSet":
        found += _claim_templates(m, line)
    return _named(m, kind, found)


def list_problems(doc: Any, default_line: int) -> tuple[Malformed, ...]:
    """A `List` document whose `items` is not a list of mappings (those items are not read)."""
    m = as_map(doc)
    kind = as_str(m.get("kind")) or ""
    if not is_list_kind(kind):
        return ()
    return _named(m, kind, _list_of(m, "items", "items", MAPPING, node_line(m, default_line)))


# the keys of a Compose service the extractor reads, and the YAML types the Compose file format allows
_SERVICE_KEYS = (
    ("environment", MAPPING_OR_LIST),
    ("labels", MAPPING_OR_LIST),
    ("networks", MAPPING_OR_LIST),
    ("volumes", LIST),
    ("command", SCALAR_OR_LIST),
    ("entrypoint", SCALAR_OR_LIST),
    ("build", SCALAR_OR_MAPPING),
    ("deploy", MAPPING),
    ("image", SCALAR),
    ("container_name", SCALAR),
    ("network_mode", SCALAR),
)


def compose_problems(doc: Any, default_line: int) -> dict[str, tuple[Malformed, ...]]:
    """Wrong-typed nodes of a Compose file, by service name ("" for `services` itself): a service
    that is no mapping, or a key the extractor reads of the wrong type. Null is absent, as above."""
    m = as_map(doc)
    line = node_line(m, default_line)
    top = _key(m, "services", "services", MAPPING, line)
    if top:
        return {"": tuple(replace(p, workload="compose file") for p in top)}
    services = as_map(m.get("services"))
    out: dict[str, tuple[Malformed, ...]] = {}
    for name, service in services.items():
        at = key_line(services, name, line)
        found = _key(services, name, f"services.{name}", MAPPING, line)
        if isinstance(service, dict):
            found += [
                p for key, expected in _SERVICE_KEYS for p in _key(service, key, f"services.{name}.{key}", expected, at)
            ]
            volumes = _seq(service.get("volumes"))
            found += _items(volumes, f"services.{name}.volumes", SCALAR_OR_MAPPING, key_line(service, "volumes", at))
        if found:
            out[str(name)] = tuple(
                replace(p, workload=f"compose service '{name}'") for p in sorted(found, key=lambda p: p.line)
            )
    return out
