"""Helm charts: `values*.yaml` read as data (by the common chart conventions), templates not rendered.

A values file does not say how the chart uses it, so this follows the conventions of
`helm create` charts and the common public charts: `image.repository`, `env`/`extraEnv`,
`javaOpts`-like keys, `persistence.{enabled,mountPath}`, `volumes`/`volumeMounts`,
`replicaCount`, `hostNetwork`, `podLabels`. Every `-D` option in any string value is collected,
since charts paste such strings into command lines. Each component section (a top-level mapping
with its own `image`) becomes its own runtime.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from typing import Any

from subguard.core.model import Mount, Resolution, Value
from subguard.deploy import jvm_options as jvm
from subguard.deploy.manifest_values import NODE_IP, POD_IP, Runtime
from subguard.extract.manifests.k8s import EPHEMERAL_SOURCES, PERSISTENT_SOURCES
from subguard.extract.manifests.yaml_docs import as_list, as_map, as_str, key_line, node_line

VALUES_RE = re.compile(r"^values(?:[-._][^/]*)?\.ya?ml$")
ENV_KEYS = ("env", "extraEnv", "extraEnvVars", "envVars", "environment")
JVM_KEYS = re.compile(r"^(java|jvm|jdk)[_-]?(tool[_-]?)?(opts|options|args|arguments)$", re.IGNORECASE)
TEMPLATE_MARK = b"{{"


def is_values_path(path: str) -> bool:
    return bool(VALUES_RE.match(posixpath.basename(path)))


def is_template_path(path: str) -> bool:
    return "templates" in path.split("/")[:-1]


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for v in node.values():
            yield from _strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v)
    elif isinstance(node, str):
        yield node


def _env(section: dict[str, Any]) -> list[tuple[str, str]]:
    env: list[tuple[str, str]] = []
    for key in ENV_KEYS:
        raw = section.get(key)
        if isinstance(raw, dict):
            env.extend((k, s) for k, v in as_map(raw).items() if (s := as_str(v)) is not None)
        for item in as_list(raw):
            e = as_map(item)
            name, value = as_str(e.get("name")), as_str(e.get("value"))
            if name and value is not None:
                env.append((name, value))
    for key, raw in section.items():
        if JVM_KEYS.match(key) and (s := as_str(raw)) is not None:
            env.append(("JAVA_OPTS", s))
    return env


def _mounts(section: dict[str, Any]) -> list[Mount]:
    mounts: list[Mount] = []
    persistence = as_map(section.get("persistence"))
    if persistence:
        enabled = persistence.get("enabled", True) is not False
        path = as_str(persistence.get("mountPath")) or as_str(persistence.get("path"))
        if path:
            kind = "persistentVolumeClaim" if enabled else "emptyDir"
            mounts.append(Mount(path=path, volume="persistence", volume_kind=kind, persistent=enabled))
    volumes: dict[str, tuple[str, bool | None]] = {}
    for key in ("volumes", "extraVolumes"):
        for vol in as_list(section.get(key)):
            v = as_map(vol)
            name = as_str(v.get("name")) or ""
            kind = next((k for k in v if k in PERSISTENT_SOURCES or k in EPHEMERAL_SOURCES), "")
            volumes[name] = (kind, True if kind in PERSISTENT_SOURCES else False if kind else None)
    for key in ("volumeMounts", "extraVolumeMounts"):
        for vm in as_list(section.get(key)):
            v = as_map(vm)
            path, name = as_str(v.get("mountPath")), as_str(v.get("name")) or ""
            if path:
                kind, persistent = volumes.get(name, ("", None))
                mounts.append(Mount(path=path, volume=name, volume_kind=kind, persistent=persistent))
    return mounts


def _image(section: dict[str, Any]) -> str:
    raw = section.get("image")
    if isinstance(raw, dict):
        img = as_map(raw)
        repo = as_str(img.get("repository")) or as_str(img.get("name")) or ""
        tag = as_str(img.get("tag"))
        return f"{repo}:{tag}" if repo and tag else repo
    return as_str(raw) or ""


def _runtime(section: dict[str, Any], name: str, path: str, line: int) -> Runtime | None:
    env = _env(section)
    from_env = {v for _, v in env}
    options_text = [s for s in _strings(section) if "-D" in s and s not in from_env]
    words = tuple(w for s in options_text for w in jvm.split_words(s) if w.startswith("-D"))
    mounts = _mounts(section)
    image = _image(section)
    if not (image or env or words or mounts):
        return None
    labels = {k: s for k, v in as_map(section.get("podLabels")).items() if (s := as_str(v))}
    replicas = section.get("replicaCount")
    host = section.get("hostNetwork") is True
    ip = Value(
        value=NODE_IP if host else POD_IP,
        resolution=Resolution.DEFAULT,
        detail="hostNetwork: the node's IP" if host else "pod IP: assigned anew whenever the pod is re-created",
    )
    return Runtime(
        kind="helm-values",
        name=as_str(section.get("fullnameOverride")) or as_str(section.get("nameOverride")) or name,
        path=path,
        line=line,
        image=image,
        labels=tuple(sorted(labels.items())),
        env=tuple(env),
        words=words,
        mounts=tuple(mounts),
        client_ip=ip,
        replicas=replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else None,
        notes=("Helm values read as data; the chart's templates are not rendered",),
    )


def runtimes(doc: Any, path: str) -> list[Runtime]:
    m = as_map(doc)
    chart = posixpath.basename(posixpath.dirname(path)) or "chart"
    out: list[Runtime] = []
    top = _runtime(
        {k: v for k, v in m.items() if not (isinstance(v, dict) and "image" in v)}, chart, path, node_line(m, 1)
    )
    if top is not None:
        out.append(top)
    for key, value in m.items():
        if isinstance(value, dict) and "image" in value:
            rt = _runtime(as_map(value), key, path, key_line(m, key, 1))
            if rt is not None:
                out.append(rt)
    return out
