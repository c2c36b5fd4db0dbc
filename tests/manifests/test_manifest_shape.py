"""Workloads with wrong-typed nodes: the file is FAILED with a reason naming the workload, the field, the
type found and the line (SG901 lands there); that workload is not read, the others of the file are."""

from __future__ import annotations

from pathlib import Path

import pytest

from subguard.core.config import Config
from subguard.core.model import FileRecord, FileStatus
from subguard.extract.base import ExtractResult, RepoContext, SourceFile
from subguard.extract.manifests.extractor import EXTRACTOR, TEMPLATE_SYNTAX_REASON
from subguard.extract.manifests.shape import describe
from subguard.rules.engine import evaluate
from subguard.rules.policy import load_policies
from subguard.scan.extraction import scan_repo
from tests.manifests.test_manifest_kinds import STORE, extract

MARK = "# <- wrong"
HOSTILE = Path(__file__).resolve().parents[1] / "fixtures" / "hostile" / "deploy" / "wrong-types.yaml"


def workload(kind: str, name: str, pod: str, spec_extra: str = "") -> str:
    """A workload document whose pod spec is `pod` (indented under `spec.template.spec`)."""
    body = "\n".join("      " + line for line in pod.strip("\n").splitlines())
    return f"apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: {name}\nspec:\n{spec_extra}  template:\n    spec:\n{body}\n"


GOOD = workload(
    "Deployment",
    "good-before",
    """
containers:
  - name: app
    image: registry.example.com/good:1
    env:
      - name: JAVA_TOOL_OPTIONS
        value: -Drocketmq.client.localOffsetStoreDir=/data/offsets
    volumeMounts: [{name: data, mountPath: /data}]
volumes:
  - name: data
    persistentVolumeClaim: {claimName: data}
""",
)
AFTER = GOOD.replace("good-before", "good-after")
C = "spec.template.spec.containers"

CASES = {
    "spec-int": (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec: 5  {MARK}\n",
        "Deployment 'x': spec is an int, expected a mapping",
    ),
    "containers-str": (
        workload("Deployment", "x", f'containers: "not a list"  {MARK}'),
        f"Deployment 'x': {C} is a str, expected a list",
    ),
    "container-str": (
        workload("StatefulSet", "x", f"containers:\n  - name: ok\n    image: ok:1\n  - just-a-string  {MARK}"),
        f"StatefulSet 'x': {C}[1] is a str, expected a mapping",
    ),
    "env-mapping": (
        workload(
            "DaemonSet",
            "x",
            f"containers:\n  - name: app\n    env:  {MARK}\n      JAVA_TOOL_OPTIONS: -Drocketmq.client.localOffsetStoreDir=/d",
        ),
        f"DaemonSet 'x': {C}[0].env is a mapping, expected a list",
    ),
    "volumes-int": (
        workload("ReplicaSet", "x", f"containers: [{{name: app}}]\nvolumes: 7  {MARK}"),
        "ReplicaSet 'x': spec.template.spec.volumes is an int, expected a list",
    ),
    "mount-str": (
        workload("Deployment", "x", f"containers:\n  - name: app\n    volumeMounts:\n      - /data  {MARK}"),
        f"Deployment 'x': {C}[0].volumeMounts[0] is a str, expected a mapping",
    ),
    "args-mapping": (
        workload("Deployment", "x", f"containers:\n  - name: app\n    args: {{x: 1}}  {MARK}"),
        f"Deployment 'x': {C}[0].args is a mapping, expected a list",
    ),
    "cronjob-template-list": (
        f"apiVersion: batch/v1\nkind: CronJob\nmetadata: {{name: x}}\nspec:\n  jobTemplate:\n    spec:\n      template: [a]  {MARK}\n",
        "CronJob 'x': spec.jobTemplate.spec.template is a list, expected a mapping",
    ),
    "claim-templates-mapping": (
        workload(
            "StatefulSet", "x", "containers: [{name: app}]", spec_extra=f"  volumeClaimTemplates: {{name: x}}  {MARK}\n"
        ),
        "StatefulSet 'x': spec.volumeClaimTemplates is a mapping, expected a list",
    ),
    "pod-metadata-int": (
        f"apiVersion: v1\nkind: Pod\nmetadata: 7  {MARK}\nspec:\n  containers: [{{name: app}}]\n",
        "Pod (unnamed): metadata is an int, expected a mapping",
    ),
    "list-items-str": (
        f"apiVersion: v1\nkind: List\nitems: nothing  {MARK}\n",
        "List (unnamed): items is a str, expected a list",
    ),
}


def mark_line(text: str) -> int:
    [line] = [i for i, row in enumerate(text.splitlines(), 1) if MARK in row]
    return line


def failed(result: ExtractResult, path: str) -> FileRecord:
    [rec] = [r for r in result.files if r.path == path]
    assert rec.status is FileStatus.FAILED, rec
    return rec


def names(result: ExtractResult) -> list[str]:
    return [d.name for d in result.deployments]


def extract_existing(path: Path) -> ExtractResult:
    """The manifests extractor over one file left where it is."""
    ctx = RepoContext(
        root=str(path.parent), repo="fx", config=Config(), paths=frozenset({path.name}), read=lambda p: None
    )
    return EXTRACTOR.extract([SourceFile(path.name, path.read_bytes())], ctx)


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_workload_is_a_located_failure_and_the_others_are_read(tmp_path: Path, case: str) -> None:
    bad, reason = CASES[case]
    text = f"{GOOD}---\n{bad}---\n{AFTER}"
    result = extract(tmp_path, {"k8s/app.yaml": text})
    assert failed(result, "k8s/app.yaml").reason == f"line {mark_line(text)}: {reason}"
    assert names(result) == ["good-before", "good-after"]  # the malformed workload yields nothing, not half
    assert [d.jvm_option(STORE) for d in result.deployments] == ["/data/offsets", "/data/offsets"]
    after = len(text.splitlines()) - len(AFTER.splitlines())
    assert [d.location.line for d in result.deployments] == [9, after + 9]  # `- name: app` of each


def test_every_wrong_node_of_a_file_is_named_by_line_then_the_yaml_break(tmp_path: Path) -> None:
    env = workload("Job", "env", f"containers:\n  - name: a\n    env: {{A: b}}  {MARK}")
    spec = f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: spec}}\nspec: [1]  {MARK}\n"
    text = f"{spec}---\n{GOOD}---\n{env}---\nkind: [unclosed\n"
    result = extract(tmp_path, {"k8s/app.yaml": text})
    first, second = [i for i, row in enumerate(text.splitlines(), 1) if MARK in row]
    reasons = failed(result, "k8s/app.yaml").reason.split("; ")
    assert reasons[:2] == [
        f"line {first}: Deployment 'spec': spec is a list, expected a mapping",
        f"line {second}: Job 'env': {C}[0].env is a mapping, expected a list",
    ]
    assert reasons[2].startswith("invalid YAML") and reasons[2].endswith(f"(line {len(text.splitlines()) + 1})")
    assert names(result) == ["good-before"]


def test_rest_of_the_repo_is_read_and_sg901_points_at_the_node(tmp_path: Path) -> None:
    bad, reason = CASES["containers-str"]
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "app.yaml").write_text(f"{GOOD}---\n{bad}")
    (tmp_path / "k8s" / "other.yaml").write_text(AFTER)
    scan = scan_repo(tmp_path, Config())
    assert sorted(d.name for d in scan.deployments) == ["good-after", "good-before"]
    assert {r.path: r.status for r in scan.files} == {
        "k8s/app.yaml": FileStatus.FAILED,
        "k8s/other.yaml": FileStatus.PARSED,
    }
    [sg901] = [f for f in evaluate([scan], load_policies(), Config()) if f.rule == "SG901"]
    line = mark_line(f"{GOOD}---\n{bad}")
    assert (sg901.location.path, sg901.location.line) == ("k8s/app.yaml", line)
    assert sg901.message == f"k8s/app.yaml could not be parsed: line {line}: {reason}"


def test_template_syntax_explains_wrong_types_skipped_not_failed(tmp_path: Path) -> None:
    bad = workload("Deployment", "x", f'containers: "{{{{ toYaml .Values.containers }}}}"  {MARK}')
    text = f"{GOOD}---\n{bad}"
    result = extract(tmp_path, {"deploy/app.yaml": text})
    [rec] = result.files
    assert rec.status is FileStatus.SKIPPED
    assert (
        rec.reason == f"{TEMPLATE_SYNTAX_REASON}: line {mark_line(text)}: Deployment 'x': {C} is a str, expected a list"
    )
    assert names(result) == ["good-before"]


def test_hostile_fixture_names_every_wrong_node() -> None:
    result = extract_existing(HOSTILE)
    assert failed(result, "wrong-types.yaml").reason == (
        "line 3: Deployment (unnamed): metadata is an int, expected a mapping; "
        f"line 7: Deployment (unnamed): {C} is a str, expected a list; "
        "line 8: Deployment (unnamed): spec.template.spec.volumes is a mapping, expected a list"
    )
    assert (
        result.deployments == ()
    )  # `kind: StatefulSet` without apiVersion is not a workload; a bare list is not a manifest


def test_absent_or_null_nodes_are_not_wrong(tmp_path: Path) -> None:
    patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: patch}\nspec:\n  replicas: 3\n"
    empty = workload("Deployment", "empty", "containers:\nvolumes: null")
    result = extract(tmp_path, {"overlays/prod/patch.yaml": f"{patch}---\n{empty}"})
    assert result.files == () and result.deployments == ()


def test_describe() -> None:
    assert [describe(v) for v in ("s", 1, 1.5, True, {}, [], None)] == [
        "a str",
        "an int",
        "a float",
        "a bool",
        "a mapping",
        "a list",
        "null",
    ]


GOOD_SERVICE = """  good:
    image: registry.example.com/good:1
    environment:
      JAVA_TOOL_OPTIONS: -Drocketmq.client.localOffsetStoreDir=/data/offsets
    volumes:
      - data:/data
"""
COMPOSE_CASES = {
    "services-list": ("services:  # <- wrong\n  - orders\n", "compose file: services is a list, expected a mapping"),
    "service-str": (
        f"services:\n{GOOD_SERVICE}  orders: registry.example.com/orders:1  {MARK}\n",
        "compose service 'orders': services.orders is a str, expected a mapping",
    ),
    "environment-int": (
        f"services:\n{GOOD_SERVICE}  orders:\n    image: o:1\n    environment: 5  {MARK}\n",
        "compose service 'orders': services.orders.environment is an int, expected a mapping or a list",
    ),
    "volumes-str": (
        f"services:\n{GOOD_SERVICE}  orders:\n    volumes: /data  {MARK}\n",
        "compose service 'orders': services.orders.volumes is a str, expected a list",
    ),
    "volume-item-list": (
        f"services:\n{GOOD_SERVICE}  orders:\n    volumes:\n      - [a, b]  {MARK}\n",
        "compose service 'orders': services.orders.volumes[0] is a list, expected a str or a mapping",
    ),
    "command-mapping": (
        f"services:\n{GOOD_SERVICE}  orders:\n    command: {{a: 1}}  {MARK}\n",
        "compose service 'orders': services.orders.command is a mapping, expected a str or a list",
    ),
    "build-list": (
        f"services:\n{GOOD_SERVICE}  orders:\n    build: [.]  {MARK}\n",
        "compose service 'orders': services.orders.build is a list, expected a str or a mapping",
    ),
    "deploy-int": (
        f"services:\n{GOOD_SERVICE}  orders:\n    deploy: 3  {MARK}\n",
        "compose service 'orders': services.orders.deploy is an int, expected a mapping",
    ),
    "image-mapping": (
        f"services:\n{GOOD_SERVICE}  orders:\n    image: {{name: o}}  {MARK}\n",
        "compose service 'orders': services.orders.image is a mapping, expected a str",
    ),
}


@pytest.mark.parametrize("case", sorted(COMPOSE_CASES))
def test_malformed_compose_service_is_a_located_failure_and_the_others_are_read(tmp_path: Path, case: str) -> None:
    text, reason = COMPOSE_CASES[case]
    result = extract(tmp_path, {"deploy/docker-compose.yml": text})
    assert failed(result, "deploy/docker-compose.yml").reason == f"line {mark_line(text)}: {reason}"
    expected = [] if case == "services-list" else ["good"]  # the wrong service yields nothing, the good one is read
    assert names(result) == expected
    assert [d.jvm_option(STORE) for d in result.deployments] == ["/data/offsets"] * len(expected)


def test_null_compose_nodes_are_absent_not_wrong(tmp_path: Path) -> None:
    text = f"services:\n{GOOD_SERVICE}  placeholder:\n  orders:\n    image: o:1\n    environment:\n    volumes:\n"
    result = extract(tmp_path, {"compose.yaml": text})
    assert result.files == ()  # no failure record: the scan counts it parsed
    assert names(result) == ["good", "orders"]
