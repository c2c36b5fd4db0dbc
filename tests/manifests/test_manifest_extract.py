"""The manifests extractor over real manifest files: workloads, compose, Helm values, Dockerfiles, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from subguard.core.config import Config
from subguard.core.model import ClientFamily, Consumer, Deployment, FileStatus, Location, Value
from subguard.extract.base import ExtractResult, RepoContext, SourceFile
from subguard.extract.manifests.extractor import EXTRACTOR, NOT_A_MANIFEST, SCHEMAS_REASON, TEMPLATE_REASON
from subguard.extract.manifests.yaml_docs import without_schemas

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "deploy" / "manifests"


@pytest.fixture(scope="module")
def result() -> ExtractResult:
    files = [
        SourceFile(p.relative_to(ROOT).as_posix(), p.read_bytes())
        for p in sorted(ROOT.rglob("*"))
        if p.is_file() and EXTRACTOR.claims(p.relative_to(ROOT).as_posix())
    ]
    ctx = RepoContext(
        root=str(ROOT), repo="fx", config=Config(), paths=frozenset(f.path for f in files), read=lambda p: None
    )
    return EXTRACTOR.extract(files, ctx)


def dep(result: ExtractResult, ident: str) -> Deployment:
    found = [d for d in result.deployments if d.deployment_id == ident]
    assert len(found) == 1, [d.deployment_id for d in result.deployments]
    return found[0]


def mounts(d: Deployment) -> list[tuple[str, str, bool | None]]:
    return [(m.path, m.volume_kind, m.persistent) for m in d.mounts]


def test_claims() -> None:
    assert EXTRACTOR.claims("deploy/app.yaml") and EXTRACTOR.claims("x/compose.yml")
    assert (
        EXTRACTOR.claims("Dockerfile")
        and EXTRACTOR.claims("docker/app.Dockerfile")
        and EXTRACTOR.claims("Dockerfile.prod")
    )
    assert not EXTRACTOR.claims("app.py")
    assert not EXTRACTOR.claims("README.md")


def test_deployment_container_env_configmap_and_options(result: ExtractResult) -> None:
    d = dep(result, "workloads.yaml#Deployment/prod/notifier/app")
    assert (d.kind, d.name, d.namespace, d.environment, d.replicas) == ("Deployment", "notifier", "prod", "prod", 3)
    assert d.location.line == 24
    # envFrom ConfigMap of the same scan, $(VAR) expansion, args; JAVA_TOOL_OPTIONS first, command line last
    assert d.jvm_options == (
        ("rocketmq.client.name", "from-cm"),
        ("rocketmq.client.localOffsetStoreDir", "/data/offsets"),
        ("user.home", "/home/app"),
        ("foo", "bar"),
    )
    assert d.instance_name is not None and d.instance_name.value == "from-cm"
    assert ("POD_IP", "<fieldRef:status.podIP>") in d.env
    assert mounts(d) == [("/data", "emptyDir", False)]
    assert d.client_ip is not None and d.client_ip.value == "pod-ip"
    assert ("app", "notifier") in d.labels and ("app.kubernetes.io/name", "notifier") in d.labels


def test_statefulset_claim_templates_hostpath_hostnetwork_and_shell_c(result: ExtractResult) -> None:
    d = dep(result, "workloads.yaml#StatefulSet/ledger/ledger")
    assert mounts(d) == [("/var/offsets", "volumeClaimTemplate", True), ("/host", "hostPath", True)]
    assert d.jvm_option("rocketmq.client.localOffsetStoreDir") == "/var/offsets"  # found inside `sh -c "..."`
    assert d.client_ip is not None and d.client_ip.value == "node-ip"


def test_cronjob_and_list_items(result: ExtractResult) -> None:
    cron = dep(result, "workloads.yaml#CronJob/nightly/job")
    assert cron.jvm_options == (("user.home", "/work"),)  # JDK_JAVA_OPTIONS
    pod = dep(result, "workloads.yaml#Pod/debug/debug")
    assert pod.kind == "Pod" and pod.image == "busybox"


def test_sidecar_is_its_own_record(result: ExtractResult) -> None:
    side = dep(result, "workloads.yaml#Deployment/prod/notifier/sidecar")
    assert side.jvm_options == () and side.mounts == ()


def test_compose(result: ExtractResult) -> None:
    c = dep(result, "docker-compose.prod.yml#compose/consumer")
    assert c.environment == "prod"
    assert mounts(c) == [
        ("/offsets", "named", True),
        ("/conf", "bind", True),
        ("/tmp/anon", "anonymous", False),
        ("/scratch", "tmpfs", False),
    ]
    assert c.jvm_options == (("rocketmq.client.localOffsetStoreDir", "/offsets"), ("rocketmq.client.name", "fixed"))
    assert ("NAMESRV_ADDR", "${NAMESRV_ADDR}") in c.env  # passed through from the host: unknown here
    assert c.client_ip is not None and c.client_ip.value == "host-ip"
    assert c.service == "fx"  # build: ./consumer -> the service of that directory
    ns = dep(result, "docker-compose.prod.yml#compose/namesrv")
    assert ns.client_ip is not None and ns.client_ip.value == "172.20.0.5"


def test_helm_values(result: ExtractResult) -> None:
    top = dep(result, "charts/consumer/values-staging.yaml#helm-values/consumer")
    assert (top.environment, top.replicas, top.image) == ("staging", 2, "registry.example.com/team/consumer:1.0")
    assert top.jvm_options == (("rocketmq.client.localOffsetStoreDir", "/data/offsets"),)
    assert mounts(top) == [("/data", "persistentVolumeClaim", True)]
    worker = dep(result, "charts/consumer/values-staging.yaml#helm-values/worker")
    assert ("HOME", "/srv") in worker.env and worker.client_ip is not None and worker.client_ip.value == "node-ip"


def test_dockerfile_final_stage(result: ExtractResult) -> None:
    d = dep(result, "Dockerfile#Dockerfile/Dockerfile")
    assert d.location.line == 6
    assert ("BUILD_ONLY", "1") not in d.env  # build stage only
    assert ("HOME", "/home/app") in d.env and ("LEGACY", "some value") in d.env
    assert d.jvm_options == (("rocketmq.client.localOffsetStoreDir", "/home/app/offsets"), ("user.home", "/home/app"))
    assert mounts(d) == [("/home/app/offsets", "image-volume", False)]
    assert any("user app" in n for n in d.notes)


def test_bad_input_is_recorded_never_raised(result: ExtractResult) -> None:
    by_path = {r.path: r for r in result.files}
    assert by_path["broken.yaml"].status is FileStatus.FAILED and "(line 6)" in by_path["broken.yaml"].reason
    assert by_path["latin1.yaml"].status is FileStatus.FAILED and "UTF-8" in by_path["latin1.yaml"].reason
    tmpl = by_path["charts/consumer/templates/deployment.yaml"]
    assert (tmpl.status, tmpl.reason) == (FileStatus.SKIPPED, TEMPLATE_REASON)
    assert (
        by_path["templated.yaml"].status is FileStatus.SKIPPED and "template syntax" in by_path["templated.yaml"].reason
    )
    # YAML without `kind`/`services` (a CI file, a bare python object tag) is not loaded at all
    assert {by_path[p].reason for p in ("ci.yml", "tagged.yaml")} == {NOT_A_MANIFEST}
    assert not [d for d in result.deployments if d.location.path in ("ci.yml", "tagged.yaml")]
    # no consumer in this scan could run in the chart: its templates hide no finding, so no note
    assert [f for f in result.findings if f.rule == "SG901"] == []


def test_one_note_per_unrendered_chart_when_a_broadcasting_consumer_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUBGUARD_HELM", "off")
    files = [
        SourceFile(p.relative_to(ROOT).as_posix(), p.read_bytes())
        for p in sorted((ROOT / "charts").rglob("*"))
        if p.is_file()
    ]
    c = Consumer(
        consumer_id="c",
        group=Value.literal("g"),
        message_model=Value.literal("BROADCASTING"),
        client=ClientFamily.JAVA_PUSH_4X,
        location=Location(path="App.java", line=1),
    )
    ctx = RepoContext(
        root=str(ROOT),
        repo="fx",
        config=Config(),
        paths=frozenset(f.path for f in files),
        read=lambda p: None,
        prior={"java": ExtractResult(consumers=(c,))},
    )
    notes = EXTRACTOR.extract(files, ctx).findings
    assert [(f.rule, f.severity.value, f.location.path, f.location.line) for f in notes] == [
        ("SG901", "note", "charts/consumer/Chart.yaml", 1)
    ]
    assert "Helm chart charts/consumer is not rendered (no helm binary on PATH" in notes[0].message


def test_python_tag_in_a_manifest_is_loaded_inert(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = f'apiVersion: v1\nkind: ConfigMap\ndata: !!python/object/apply:os.system ["touch {marker}"]\n'
    ctx = RepoContext(root=str(tmp_path), repo="fx", config=Config(), paths=frozenset({"cm.yaml"}), read=lambda p: None)
    EXTRACTOR.extract([SourceFile("cm.yaml", text.encode())], ctx)
    assert not marker.exists()


# an operator's install file, as they are published: its custom resources' schemas, then the operator
OPERATOR = """# CRDs first, then the operator itself
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: brokers.rocketmq.apache.org
spec:
  group: rocketmq.apache.org
  names: {kind: Broker, plural: brokers}
  versions:
    - name: v1alpha1
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
\t\t\t\ttype: object
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: rocketmq-operator
  namespace: ops
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: operator
          image: apacherocketmq/rocketmq-operator:0.3.0
"""


def _extract(tmp_path: Path, name: str, text: str) -> ExtractResult:
    ctx = RepoContext(root=str(tmp_path), repo="fx", config=Config(), paths=frozenset({name}), read=lambda p: None)
    return EXTRACTOR.extract([SourceFile(name, text.encode())], ctx)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_custom_resource_schemas_are_not_parsed(tmp_path: Path, newline: str) -> None:
    # the schema's tab-indented line is invalid YAML: the file would fail if that document were parsed
    result = _extract(tmp_path, "deploy/operator.yaml", OPERATOR.replace("\n", newline))
    assert [(d.name, d.location.line) for d in result.deployments] == [("rocketmq-operator", 28)]
    assert result.files == ()
    schema_alone = OPERATOR.split("---")[0]
    result = _extract(tmp_path, "crds.yaml", schema_alone + "---\n" + schema_alone)
    assert [(r.path, r.status, r.reason) for r in result.files] == [("crds.yaml", FileStatus.SKIPPED, SCHEMAS_REASON)]
    assert result.deployments == ()


def test_without_schemas_keeps_every_other_document_and_line() -> None:
    crd = "apiVersion: v1\nkind: 'CustomResourceDefinition'  # the schema\nspec:\n  x: [1\n"
    deployment = "kind: Deployment\nmetadata: {name: a}\n"
    for text in (crd + "---\n" + deployment, crd + "...\n---\n" + deployment, deployment + "--- # next\n" + crd):
        out, blanked = without_schemas(text)
        assert blanked == 1 and out.count("\n") == text.count("\n") and deployment in out
        assert "CustomResourceDefinition" not in out and "x: [1" not in out
    untouched = [
        "spec:\n  kind: CustomResourceDefinition\n",  # not a document's own kind
        "--- !!map\nkind: CustomResourceDefinition\n",  # a document that starts on its marker line
        "{kind: CustomResourceDefinition}\n",  # flow style: the loader reads it
        "kind: CustomResourceDefinition\rspec: 1\r",  # lone CRs: line breaks the split would not see
        "kind: CustomResourceDefinitionList\n",
    ]
    for text in untouched:
        assert without_schemas(text) == (text, 0)
