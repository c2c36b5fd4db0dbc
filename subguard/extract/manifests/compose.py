"""docker-compose files -> one `Runtime` per service (environment, command, volumes, networking)."""

from __future__ import annotations

import posixpath
import re
from typing import Any

from subguard.core.model import Mount, Resolution, Value
from subguard.deploy import jvm_options as jvm
from subguard.deploy.manifest_values import CONTAINER_IP, HOST_IP, Runtime
from subguard.extract.manifests.yaml_docs import as_list, as_map, as_str, key_line

COMPOSE_NAME_RE = re.compile(r"^(?:docker-)?compose(?:[-._][^/]*)?\.ya?ml$")


def is_compose_path(path: str) -> bool:
    return bool(COMPOSE_NAME_RE.match(posixpath.basename(path)))


def looks_like_compose(doc: Any) -> bool:
    services = as_map(doc).get("services")
    return isinstance(services, dict) and any(
        isinstance(s, dict) and ("image" in s or "build" in s) for s in services.values()
    )


def _env(service: dict[str, Any]) -> list[tuple[str, str]]:
    raw = service.get("environment")
    out: list[tuple[str, str]] = []
    if isinstance(raw, dict):
        for k, v in as_map(raw).items():
            s = as_str(v)
            out.append((k, s if s is not None else f"${{{k}}}"))
    else:
        for item in as_list(raw):
            s = as_str(item)
            if s is None:
                continue
            key, eq, value = s.partition("=")
            out.append((key, value if eq else f"${{{key}}}"))  # `- KEY` passes the host's value through
    return out


def _words(service: dict[str, Any], env: list[tuple[str, str]]) -> tuple[str, ...]:
    words: list[str] = []
    for key in ("entrypoint", "command"):
        value = service.get(key)
        if isinstance(value, list):
            words.extend(s for i in value if (s := as_str(i)) is not None)
        elif (s := as_str(value)) is not None:
            words.extend(jvm.split_words(s))
    return tuple(jvm.expand(w, env) for w in words)


def _mount(item: Any) -> Mount | None:
    if isinstance(item, dict):
        m = as_map(item)
        target = as_str(m.get("target"))
        kind = as_str(m.get("type")) or "volume"
        source = as_str(m.get("source")) or ""
        if not target:
            return None
        if kind == "tmpfs":
            return Mount(path=target, volume_kind="tmpfs", persistent=False)
        if kind == "bind":
            return Mount(path=target, volume=source, volume_kind="bind", persistent=True)
        if kind == "volume":
            return Mount(
                path=target, volume=source, volume_kind="named" if source else "anonymous", persistent=bool(source)
            )
        return Mount(path=target, volume=source, volume_kind=kind, persistent=None)
    s = as_str(item)
    if not s:
        return None
    parts = s.split(":")
    if len(parts) == 1:
        return Mount(path=parts[0], volume_kind="anonymous", persistent=False)
    source, target = parts[0], parts[1]
    if source.startswith((".", "/", "~", "$")):
        return Mount(path=target, volume=source, volume_kind="bind", persistent=True)
    return Mount(path=target, volume=source, volume_kind="named", persistent=True)


def _ip(service: dict[str, Any]) -> Value:
    if as_str(service.get("network_mode")) == "host":
        return Value(value=HOST_IP, resolution=Resolution.DEFAULT, detail="network_mode: host: the host's IP")
    for net in as_map(service.get("networks")).values():
        fixed = as_str(as_map(net).get("ipv4_address"))
        if fixed:
            return Value(value=fixed, resolution=Resolution.LITERAL, detail="networks.ipv4_address")
    return Value(
        value=CONTAINER_IP,
        resolution=Resolution.DEFAULT,
        detail="container IP: assigned when the container is (re)created",
    )


def runtimes(doc: Any, path: str, unread: frozenset[str] = frozenset()) -> list[Runtime]:
    """One runtime per service, except the `unread` ones (wrong-typed: `manifest_shape.compose_problems`)."""
    m = as_map(doc)
    services = as_map(m.get("services"))
    out: list[Runtime] = []
    for name, raw in services.items():
        s = as_map(raw)
        if not s or str(name) in unread:
            continue
        env = _env(s)
        labels_raw = s.get("labels")
        labels = (
            [(k, as_str(v) or "") for k, v in as_map(labels_raw).items()]
            if isinstance(labels_raw, dict)
            else [(a, b) for x in as_list(labels_raw) if (t := as_str(x)) for a, _, b in [t.partition("=")]]
        )
        mounts = tuple(mt for item in as_list(s.get("volumes")) if (mt := _mount(item)) is not None)
        replicas = as_map(s.get("deploy")).get("replicas")
        build = s.get("build")
        context = as_str(as_map(build).get("context")) if isinstance(build, dict) else as_str(build)
        out.append(
            Runtime(
                kind="compose",
                name=name,
                path=path,
                line=key_line(services, name, 1),
                container_name=as_str(s.get("container_name")) or "",
                image=as_str(s.get("image")) or "",
                labels=tuple(sorted(labels)),
                env=tuple(env),
                words=_words(s, env),
                mounts=mounts,
                client_ip=_ip(s),
                build_context=context,
                replicas=replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else None,
            )
        )
    return out
