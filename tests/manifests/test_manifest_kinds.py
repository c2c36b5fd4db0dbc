"""Every workload kind from a real multi-document manifest file: DaemonSet, Job, CronJob, ReplicaSet and
Pod each carry the offset directory in a different place (env, args, JAVA_TOOL_OPTIONS, sh -c) over a
different volume source (emptyDir, persistentVolumeClaim, hostPath)."""

from __future__ import annotations

from pathlib import Path

import pytest

from subguard.core.config import Config
from subguard.core.model import ClientFamily, Consumer, Deployment, Location, Value
from subguard.deploy.offset_store import offset_dir
from subguard.extract.base import ExtractResult, RepoContext, SourceFile
from subguard.extract.manifests.extractor import EXTRACTOR

STORE = "rocketmq.client.localOffsetStoreDir"
KINDS = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: cache-warmer
  namespace: prod
spec:
  selector:
    matchLabels: {app: cache-warmer}
  template:
    metadata:
      labels: {app: cache-warmer}
    spec:
      hostNetwork: true
      containers:
        - name: warmer
          image: registry.example.com/cache-warmer:3.1
          args: ["-Xmx256m", "-Drocketmq.client.localOffsetStoreDir=/var/lib/warmer/offsets", "-jar", "/app.jar"]
          volumeMounts:
            - name: node-state
              mountPath: /var/lib/warmer
      volumes:
        - name: node-state
          hostPath:
            path: /var/lib/warmer
            type: DirectoryOrCreate
---
apiVersion: batch/v1
kind: Job
metadata:
  name: replay
  namespace: prod
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: replay
          image: registry.example.com/replay:1.0
          env:
            - name: JAVA_TOOL_OPTIONS
              value: "-Drocketmq.client.localOffsetStoreDir=/scratch/offsets"
          volumeMounts:
            - name: scratch
              mountPath: /scratch
      volumes:
        - name: scratch
          emptyDir: {}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: reconcile
  namespace: prod
spec:
  schedule: "*/15 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
            - name: reconcile
              image: registry.example.com/reconcile:2.4
              command: ["sh", "-c"]
              args: ["exec java -Drocketmq.client.localOffsetStoreDir=/state/offsets -jar /app.jar"]
              volumeMounts:
                - name: state
                  mountPath: /state
          volumes:
            - name: state
              persistentVolumeClaim:
                claimName: reconcile-state
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: audit-log
  namespace: prod
spec:
  replicas: 2
  selector:
    matchLabels: {app: audit-log}
  template:
    metadata:
      labels: {app: audit-log}
    spec:
      containers:
        - name: audit
          image: registry.example.com/audit-log:5.0
          env:
            - name: OFFSETS
              value: /data/offsets
            - name: JAVA_OPTS
              value: "-Xms128m -Drocketmq.client.localOffsetStoreDir=$(OFFSETS)"
          volumeMounts:
            - name: data
              mountPath: /data
      volumes:
        - name: data
          persistentVolumeClaim:
            claimName: audit-log-data
---
apiVersion: v1
kind: Pod
metadata:
  name: probe
  namespace: prod
spec:
  containers:
    - name: probe
      image: registry.example.com/probe:0.9
      env:
        - name: JAVA_TOOL_OPTIONS
          value: -Drocketmq.client.localOffsetStoreDir=/tmp/offsets -Duser.home=/tmp
      volumeMounts:
        - name: tmp
          mountPath: /tmp
  volumes:
    - name: tmp
      emptyDir:
        medium: Memory
"""


def extract(root: Path, files: dict[str, str]) -> ExtractResult:
    """Write `files` under `root` and run the manifests extractor over them, as a scan reads them."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    sources = [SourceFile(rel, (root / rel).read_bytes()) for rel in sorted(files)]
    ctx = RepoContext(root=str(root), repo="fx", config=Config(), paths=frozenset(files), read=lambda p: None)
    return EXTRACTOR.extract(sources, ctx)


def broadcasting() -> Consumer:
    return Consumer(
        consumer_id="c",
        group=Value.literal("g"),
        message_model=Value.literal("BROADCASTING"),
        client=ClientFamily.JAVA_PUSH_4X,
        service="fx",
        repo="fx",
        location=Location(path="A.java", line=1),
    )


@pytest.fixture(scope="module")
def kinds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Deployment]:
    result = extract(tmp_path_factory.mktemp("kinds"), {"k8s/consumers.yaml": KINDS})
    assert result.files == ()  # parsed: no record with a reason
    return {d.kind: d for d in result.deployments}


def test_every_kind_is_one_record(kinds: dict[str, Deployment]) -> None:
    assert sorted(kinds) == ["CronJob", "DaemonSet", "Job", "Pod", "ReplicaSet"]


@pytest.mark.parametrize(
    ("kind", "ident", "line", "store", "mount", "persistent"),
    [
        (
            "DaemonSet",
            "DaemonSet/prod/cache-warmer/warmer",
            15,
            "/var/lib/warmer/offsets",
            ("/var/lib/warmer", "hostPath"),
            True,
        ),
        ("Job", "Job/prod/replay/replay", 38, "/scratch/offsets", ("/scratch", "emptyDir"), False),
        (
            "CronJob",
            "CronJob/prod/reconcile/reconcile",
            63,
            "/state/offsets",
            ("/state", "persistentVolumeClaim"),
            True,
        ),
        (
            "ReplicaSet",
            "ReplicaSet/prod/audit-log/audit",
            89,
            "/data/offsets",
            ("/data", "persistentVolumeClaim"),
            True,
        ),
        ("Pod", "Pod/prod/probe/probe", 111, "/tmp/offsets", ("/tmp", "emptyDir"), False),
    ],
)
def test_kind_container_offset_dir_and_volume(
    kinds: dict[str, Deployment], kind: str, ident: str, line: int, store: str, mount: tuple[str, str], persistent: bool
) -> None:
    d = kinds[kind]
    assert d.deployment_id == f"k8s/consumers.yaml#{ident}"
    assert (d.kind, d.name, d.namespace) == (kind, ident.split("/")[2], "prod")
    assert (d.location.path, d.location.line) == ("k8s/consumers.yaml", line)  # the container's `- name:` line
    assert d.jvm_option(STORE) == store
    assert [(m.path, m.volume_kind) for m in d.mounts] == [mount]
    verdict = offset_dir(broadcasting(), d)
    assert verdict is not None and (verdict.text, verdict.persistent) == (store, persistent)
    assert verdict.mount is not None and verdict.mount.path == mount[0]


def test_kind_runtime_identity(kinds: dict[str, Deployment]) -> None:
    assert {k: d.replicas for k, d in kinds.items()} == {
        "DaemonSet": None,
        "Job": None,
        "CronJob": None,
        "ReplicaSet": 2,
        "Pod": 1,
    }
    ips = {k: d.client_ip.value for k, d in kinds.items() if d.client_ip is not None}
    assert ips == {
        "DaemonSet": "node-ip",
        "Job": "pod-ip",
        "CronJob": "pod-ip",
        "ReplicaSet": "pod-ip",
        "Pod": "pod-ip",
    }
    assert ("app", "audit-log") in kinds["ReplicaSet"].labels and ("app", "cache-warmer") in kinds["DaemonSet"].labels
    assert kinds["Pod"].jvm_options == ((STORE, "/tmp/offsets"), ("user.home", "/tmp"))
    assert kinds["CronJob"].image == "registry.example.com/reconcile:2.4"


def test_kinds_inside_a_list_document(tmp_path: Path) -> None:
    items = "".join("\n  - " + doc.replace("\n", "\n    ").rstrip() for doc in KINDS.split("---\n"))
    result = extract(tmp_path, {"k8s/list.yaml": f"apiVersion: v1\nkind: List\nitems:{items}\n"})
    assert result.files == ()
    assert sorted(d.kind for d in result.deployments) == ["CronJob", "DaemonSet", "Job", "Pod", "ReplicaSet"]
    assert {d.kind: d.jvm_option(STORE) for d in result.deployments}["ReplicaSet"] == "/data/offsets"
