"""What every manifest reader shares: runtime identity values, env-reference encoding, and the
step from (env, command words, mounts) to a `Deployment` record."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field

from subguard.core.model import Deployment, Location, Mount, Resolution, Value
from subguard.deploy import jvm_options as jvm
from subguard.deploy.environment import name_from_path

# `Deployment.client_ip.value` when the runtime decides the IP (no code override known yet).
POD_IP = "pod-ip"  # Kubernetes pod IP: new on every pod re-creation, for StatefulSets too
NODE_IP = "node-ip"  # hostNetwork: the node's address; moves when the pod is scheduled elsewhere
HOST_IP = "host-ip"  # compose network_mode: host
CONTAINER_IP = "container-ip"  # compose bridge network: assigned when the container is created

# Env values that are not literals are recorded as `<source:detail>`, e.g. `<fieldRef:metadata.name>`.
FIELD_REF = "fieldRef"


def ref_value(source: str, detail: str) -> str:
    return f"<{source}:{detail}>"


def parse_ref(value: str) -> tuple[str, str] | None:
    """(source, detail) of an encoded reference, None for a literal."""
    if value.startswith("<") and value.endswith(">") and ":" in value:
        source, _, detail = value[1:-1].partition(":")
        return source, detail
    return None


@dataclass(frozen=True)
class Runtime:
    """One container as a manifest describes it, before it becomes a `Deployment`."""

    kind: str
    name: str
    path: str
    line: int
    container_name: str = ""
    namespace: str = ""
    image: str = ""
    labels: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    words: tuple[str, ...] = ()  # command + args (entrypoint + cmd), expanded where possible
    mounts: tuple[Mount, ...] = ()
    client_ip: Value | None = None
    replicas: int | None = None
    strategy: str = ""  # the workload's update strategy (`Deployment.strategy`)
    container: bool = True
    environment: str = ""
    build_context: str | None = None  # compose `build:` directory, relative to the file
    notes: tuple[str, ...] = field(default=())


def jvm_options(env: Sequence[tuple[str, str]], words: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """JVM `-D` options from option env vars (applied first) and the command line (wins), in effect order."""
    pairs = [*jvm.options_from_env(env), *jvm.d_options(words)]
    return tuple(p for i, p in enumerate(pairs) if p not in pairs[i + 1 :])  # a repeated option counts once, last place


def to_deployment(rt: Runtime) -> Deployment:
    options = jvm_options(rt.env, rt.words)
    instance = [v for k, v in options if k == jvm.CLIENT_NAME]
    loc = Location(path=rt.path, line=rt.line)
    ident = "/".join(p for p in (rt.kind, rt.namespace, rt.name, rt.container_name) if p)
    environment = rt.environment or (rt.namespace if rt.namespace else "") or (name_from_path(rt.path) or "")
    return Deployment(
        deployment_id=f"{rt.path}#{ident}",
        service="",
        kind=rt.kind,
        name=rt.name,
        namespace=rt.namespace,
        environment=environment,
        container=rt.container,
        image=rt.image,
        labels=rt.labels,
        jvm_options=options,
        env=rt.env,
        mounts=rt.mounts,
        instance_name=Value(
            value=instance[-1], resolution=Resolution.LITERAL, detail=f"-D{jvm.CLIENT_NAME}", location=loc
        )
        if instance
        else None,
        client_ip=rt.client_ip,
        replicas=rt.replicas,
        strategy=rt.strategy,
        location=loc,
        notes=rt.notes,
    )


def image_name(image: str) -> str:
    """`registry:5000/team/order-service:1.2@sha256:..` -> `order-service`."""
    ref = image.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    return last.split(":", 1)[0]


def under(path: str, mount: str) -> bool:
    """Whether `path` is the mount path or inside it (POSIX, normalised)."""
    p, m = posixpath.normpath(path), posixpath.normpath(mount)
    return p == m or m == "/" or p.startswith(m.rstrip("/") + "/")
