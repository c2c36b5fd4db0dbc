"""Kubernetes workloads -> one `Runtime` per container.

Reads Pod, Deployment, StatefulSet (with volumeClaimTemplates), DaemonSet, ReplicaSet, Job, CronJob
(and the Deployment look-alikes Rollout and DeploymentConfig), `List` documents, and ConfigMaps of
the same scan for `envFrom` / `configMapKeyRef`. `runtimes` expects a well-formed workload:
`manifest_shape.workload_problems` is checked first, and a workload with wrong-typed nodes is not read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from subguard.core.model import Mount, Resolution, Value
from subguard.deploy import jvm_options as jvm
from subguard.deploy.manifest_values import FIELD_REF, NODE_IP, POD_IP, Runtime, ref_value
from subguard.extract.manifests.yaml_docs import as_list, as_map, as_str, item_line, key_line, node_line

# kind -> path from the document to the pod spec
POD_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "Rollout": ("spec", "template", "spec"),
    "DeploymentConfig": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
# Volume sources whose data outlives the pod.
PERSISTENT_SOURCES = frozenset(
    {
        "persistentVolumeClaim",
        "hostPath",
        "nfs",
        "cephfs",
        "rbd",
        "iscsi",
        "glusterfs",
        "csi",
        "awsElasticBlockStore",
        "gcePersistentDisk",
        "azureDisk",
        "azureFile",
        "cinder",
        "fc",
        "flocker",
        "portworxVolume",
        "quobyte",
        "scaleIO",
        "storageos",
        "vsphereVolume",
        "photonPersistentDisk",
    }
)
# Volume sources that live and die with the pod, or are read-only projections.
EPHEMERAL_SOURCES = frozenset({"emptyDir", "ephemeral", "configMap", "secret", "downwardAPI", "projected", "gitRepo"})
VOLUME_CLAIM_TEMPLATE = "volumeClaimTemplate"
# kind -> (key under spec, the strategy when none is written): how a changed template replaces pods
STRATEGY_KEYS: dict[str, tuple[str, str]] = {
    "Deployment": ("strategy", "RollingUpdate"),
    "StatefulSet": ("updateStrategy", "RollingUpdate"),
    "DaemonSet": ("updateStrategy", "RollingUpdate"),
    "DeploymentConfig": ("strategy", "Rolling"),  # OpenShift: Rolling (default), Recreate, Custom
    "Rollout": ("strategy", "Canary"),  # Argo Rollouts: canary or blueGreen; both run old and new pods together
}


def update_strategy(doc: Any) -> str:
    """The workload's update strategy as written (`type:`; Argo's `canary`/`blueGreen` key), else its
    kind's default; "" for kinds without one (Pod, Job, ReplicaSet, ...)."""
    m = as_map(doc)
    keys = STRATEGY_KEYS.get(as_str(m.get("kind")) or "")
    if keys is None:
        return ""
    key, default = keys
    node = as_map(as_map(m.get("spec")).get(key))
    written = as_str(node.get("type"))
    if written:
        return written
    if "blueGreen" in node:
        return "BlueGreen"
    return "Canary" if "canary" in node else default


@dataclass(frozen=True)
class ConfigMaps:
    """ConfigMap data of the scan, by (namespace, name); namespace "" matches any."""

    data: Mapping[tuple[str, str], Mapping[str, str]]

    def get(self, namespace: str, name: str) -> Mapping[str, str] | None:
        return self.data.get((namespace, name)) or self.data.get(("", name))


def is_workload(doc: Any) -> bool:
    m = as_map(doc)
    return as_str(m.get("kind")) in POD_SPEC_PATHS and "apiVersion" in m


def config_map(doc: Any) -> tuple[tuple[str, str], dict[str, str]] | None:
    m = as_map(doc)
    if as_str(m.get("kind")) != "ConfigMap":
        return None
    meta = as_map(m.get("metadata"))
    data = {k: s for k, v in as_map(m.get("data")).items() if (s := as_str(v)) is not None}
    return (as_str(meta.get("namespace")) or "", as_str(meta.get("name")) or ""), data


def is_list_kind(kind: str) -> bool:
    """`List` and the typed lists (`DeploymentList`, ...): documents whose `items` are the objects."""
    return kind.endswith("List")


def expand_lists(doc: Any) -> list[Any]:
    """A `kind: List` document's items, else the document itself."""
    m = as_map(doc)
    if is_list_kind(as_str(m.get("kind")) or ""):
        return [i for i in as_list(m.get("items")) if isinstance(i, dict)]
    return [doc]


def _dig(node: Any, keys: tuple[str, ...]) -> Any:
    for k in keys:
        node = as_map(node).get(k)
    return node


def _volume(vol: Any) -> tuple[str, str, bool | None]:
    """(name, source kind, persistent) of a pod volume."""
    m = as_map(vol)
    name = as_str(m.get("name")) or ""
    for key in m:
        if key in PERSISTENT_SOURCES:
            return name, key, True
        if key in EPHEMERAL_SOURCES:
            return name, key, False
    other = [k for k in m if k != "name"]
    return name, other[0] if other else "", None


def _env(container: Mapping[str, Any], namespace: str, cms: ConfigMaps, notes: list[str]) -> list[tuple[str, str]]:
    env: list[tuple[str, str]] = []
    for src in as_list(container.get("envFrom")):
        s = as_map(src)
        prefix = as_str(s.get("prefix")) or ""
        ref = as_map(s.get("configMapRef"))
        cm_name = as_str(ref.get("name"))
        data = cms.get(namespace, cm_name) if cm_name else None
        if data is not None:
            env.extend((prefix + k, v) for k, v in data.items())
        elif cm_name or "secretRef" in s:
            what = f"ConfigMap {cm_name}" if cm_name else f"Secret {as_str(as_map(s.get('secretRef')).get('name'))}"
            notes.append(f"envFrom {what} is not part of the scan; its variables are unknown")
    for item in as_list(container.get("env")):
        e = as_map(item)
        name = as_str(e.get("name"))
        if not name:
            continue
        value = as_str(e.get("value"))
        if value is not None:
            env.append((name, jvm.expand(value, env)))
            continue
        vf = as_map(e.get("valueFrom"))
        if "fieldRef" in vf:
            env.append((name, ref_value(FIELD_REF, as_str(as_map(vf["fieldRef"]).get("fieldPath")) or "")))
        elif "configMapKeyRef" in vf:
            r = as_map(vf["configMapKeyRef"])
            data = cms.get(namespace, as_str(r.get("name")) or "")
            key = as_str(r.get("key")) or ""
            if data is not None and key in data:
                env.append((name, data[key]))
            else:
                env.append((name, ref_value("configMapKeyRef", f"{as_str(r.get('name'))}/{key}")))
        elif "secretKeyRef" in vf:
            r = as_map(vf["secretKeyRef"])
            env.append((name, ref_value("secretKeyRef", f"{as_str(r.get('name'))}/{as_str(r.get('key'))}")))
        elif "resourceFieldRef" in vf:
            env.append(
                (name, ref_value("resourceFieldRef", as_str(as_map(vf["resourceFieldRef"]).get("resource")) or ""))
            )
        else:
            env.append((name, ref_value("valueFrom", "unknown")))
    return env


def _words(container: Mapping[str, Any], env: list[tuple[str, str]]) -> tuple[str, ...]:
    words: list[str] = []
    for key in ("command", "args"):
        value = container.get(key)
        items = as_list(value) if isinstance(value, list) else ([value] if as_str(value) else [])
        words.extend(jvm.expand(s, env) for i in items if (s := as_str(i)) is not None)
    return tuple(words)


def runtimes(doc: Any, path: str, default_line: int, cms: ConfigMaps) -> list[Runtime]:
    """One Runtime per (non-init) container of a workload document."""
    m = as_map(doc)
    kind = as_str(m.get("kind")) or ""
    pod = as_map(_dig(m, POD_SPEC_PATHS.get(kind, ())))
    meta = as_map(m.get("metadata"))
    name = as_str(meta.get("name")) or ""
    namespace = as_str(meta.get("namespace")) or ""
    labels = {**{k: s for k, v in as_map(meta.get("labels")).items() if (s := as_str(v))}}
    template_meta = as_map(_dig(m, POD_SPEC_PATHS.get(kind, ())[:-1] + ("metadata",))) if kind != "Pod" else {}
    labels.update({k: s for k, v in as_map(template_meta.get("labels")).items() if (s := as_str(v))})
    volumes: dict[str, tuple[str, bool | None]] = {}
    for vol in as_list(pod.get("volumes")):
        vname, vkind, persistent = _volume(vol)
        volumes[vname] = (vkind, persistent)
    if kind == "StatefulSet":
        for tmpl in as_list(as_map(m.get("spec")).get("volumeClaimTemplates")):
            tname = as_str(as_map(as_map(tmpl).get("metadata")).get("name"))
            if tname:
                volumes[tname] = (VOLUME_CLAIM_TEMPLATE, True)
    host_network = pod.get("hostNetwork") is True
    ip = (
        Value(
            value=NODE_IP,
            resolution=Resolution.DEFAULT,
            detail="hostNetwork: the node's IP; changes when the pod moves to another node",
        )
        if host_network
        else Value(
            value=POD_IP, resolution=Resolution.DEFAULT, detail="pod IP: assigned anew whenever the pod is re-created"
        )
    )
    replicas_raw = as_map(m.get("spec")).get("replicas")
    replicas = replicas_raw if isinstance(replicas_raw, int) and not isinstance(replicas_raw, bool) else None
    strategy = update_strategy(m)
    containers = as_list(pod.get("containers"))
    out: list[Runtime] = []
    for idx, item in enumerate(containers):
        c = as_map(item)
        notes: list[str] = []
        env = _env(c, namespace, cms, notes)
        mounts = []
        for vm in as_list(c.get("volumeMounts")):
            v = as_map(vm)
            mpath, vname = as_str(v.get("mountPath")), as_str(v.get("name")) or ""
            if not mpath:
                continue
            vkind, persistent = volumes.get(vname, ("", None))
            if vname not in volumes:
                notes.append(f"volumeMount {vname} at {mpath} has no matching volume")
            mounts.append(Mount(path=mpath, volume=vname, volume_kind=vkind, persistent=persistent))
        out.append(
            Runtime(
                kind=kind,
                name=name,
                path=path,
                line=item_line(containers, idx, node_line(c, key_line(m, "kind", default_line))),
                container_name=as_str(c.get("name")) or "",
                namespace=namespace,
                image=as_str(c.get("image")) or "",
                labels=tuple(sorted(labels.items())),
                env=tuple(env),
                words=_words(c, env),
                mounts=tuple(mounts),
                client_ip=ip,
                replicas=replicas
                if kind not in ("Pod", "Job", "CronJob", "DaemonSet")
                else (1 if kind == "Pod" else None),
                strategy=strategy,
                notes=tuple(notes),
            )
        )
    return out
