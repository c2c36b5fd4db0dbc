"""The manifests extractor: Kubernetes workloads, Helm values, docker-compose files and Dockerfiles
become `Deployment` records (one per container).

Claims every `*.yaml`/`*.yml` not claimed earlier (it is registered last) and every Dockerfile.
`needles` is empty on purpose: the facts it needs (`-D` options, mounts, hostNetwork, HOME) carry
no RocketMQ marker, and a Helm template must be seen to be recorded as not rendered. The cost is
bounded by the few YAML files a repo has; files that are not manifests parse to nothing.

Helm templates (`templates/*.yaml` with `{{ }}`) are skipped with the reason "Helm template, not
rendered"; when such a template describes a workload, an SG901 note says its facts are missing.

A file is FAILED (SG901, at the first line named) when its YAML breaks off or a workload in it has
wrong-typed nodes (`manifest_shape`); the reason names each, `line N: Deployment 'x': spec is an int,
expected a mapping` (SKIPPED instead when the file holds `{{ }}`, whose rendering would explain
them). Such a workload is not read; the documents before the break and the other workloads are.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from subguard.core.limits import ParseTimeout, time_budget
from subguard.core.model import Deployment, FileRecord, FileStatus, Finding, Location, Severity, fingerprint
from subguard.deploy.manifest_values import Runtime, to_deployment
from subguard.deploy.service import service_for
from subguard.extract.base import ExtractResult, RepoContext, SourceFile
from subguard.extract.manifests import compose, docker, helm, k8s, shape
from subguard.extract.manifests.yaml_docs import Document, load_documents

NAME = "manifests"
TEMPLATE_RULE = "SG901"
TEMPLATE_REASON = "Helm template, not rendered"
TEMPLATE_SYNTAX_REASON = "template syntax ({{ }}), not rendered"
# Words that make a skipped template matter: it describes a container whose facts SG301/SG302 need.
NOT_A_MANIFEST = "YAML without kind or services (not a manifest)"
_MANIFEST_MARKS = (b"kind", b"services")
_TEMPLATE_RELEVANT = (b"containers:", b"-D", b"JAVA_OPTS", b"JAVA_TOOL_OPTIONS", b"volumeMounts", b"rocketmq")


def _is_yaml(path: str) -> bool:
    return path.endswith((".yaml", ".yml"))


@dataclass(frozen=True)
class _Parsed:
    path: str
    docs: tuple[Document, ...]
    failure: str = ""  # the YAML error that ended the file early: `reason (line N)`
    templated: bool = False  # holds `{{ }}`: a wrong-typed node is the template's doing


class ManifestsExtractor:
    name = NAME
    needles: tuple[bytes, ...] = ()

    def claims(self, path: str) -> bool:
        return _is_yaml(path) or docker.is_dockerfile_path(path)

    def extract(self, files: Sequence[SourceFile], repo: RepoContext) -> ExtractResult:
        records: list[FileRecord] = []
        findings: list[Finding] = []
        parsed: list[_Parsed] = []
        runtimes: list[Runtime] = []
        for f in files:
            try:
                text = f.text()
            except UnicodeDecodeError as exc:
                records.append(_record(f.path, FileStatus.FAILED, f"not UTF-8 text (byte {exc.start})"))
                continue
            if docker.is_dockerfile_path(f.path):
                rt = docker.parse(text, f.path)
                if rt is None:
                    records.append(_record(f.path, FileStatus.SKIPPED, "Dockerfile without FROM"))
                else:
                    runtimes.append(rt)
                continue
            templated = helm.TEMPLATE_MARK in f.data
            if templated and helm.is_template_path(f.path):
                records.append(_record(f.path, FileStatus.SKIPPED, TEMPLATE_REASON))
                if any(w in f.data for w in _TEMPLATE_RELEVANT):
                    findings.append(_template_note(f.path, repo.repo))
                continue
            if not (templated or any(m in f.data for m in _MANIFEST_MARKS) or compose.is_compose_path(f.path)
                    or helm.is_values_path(f.path)):
                # only a `kind:` (workload, ConfigMap, List) or a `services:` (compose) makes a runtime:
                # the line-numbering loader costs ~5 ms a file, and most YAML of a monorepo is settings
                records.append(_record(f.path, FileStatus.SKIPPED, NOT_A_MANIFEST))
                continue
            try:
                with time_budget(repo.config.parse_timeout):
                    docs, failure = load_documents(text)
            except ParseTimeout as exc:
                records.append(_record(f.path, FileStatus.FAILED, str(exc)))
                continue
            if failure is not None and templated:
                records.append(_record(f.path, FileStatus.SKIPPED, f"{TEMPLATE_SYNTAX_REASON} (line {failure.line})"))
                continue
            parsed.append(_Parsed(f.path, tuple(docs), f"{failure.reason} (line {failure.line})" if failure else "", templated))
        cms = k8s.ConfigMaps(
            {key: data for p in parsed for d in p.docs for item in k8s.expand_lists(d.data) if (cm := k8s.config_map(item)) for key, data in [cm]}
        )
        for p in parsed:
            found, malformed = _yaml_runtimes(p, cms)
            runtimes.extend(found)
            if malformed or p.failure:
                records.append(_failure_record(p, malformed))
        deployments = [_with_service(to_deployment(rt), rt, repo) for rt in runtimes]
        return ExtractResult(deployments=tuple(deployments), files=tuple(records), findings=tuple(findings))


def _yaml_runtimes(p: _Parsed, cms: k8s.ConfigMaps) -> tuple[list[Runtime], list[shape.Malformed]]:
    """The runtimes of a parsed YAML file, and the wrong-typed nodes of the workloads left unread."""
    out: list[Runtime] = []
    malformed = [m for doc in p.docs for m in shape.list_problems(doc.data, doc.line)]
    for doc in p.docs:
        for item in k8s.expand_lists(doc.data):
            if not k8s.is_workload(item):
                continue
            problems = shape.workload_problems(item, doc.line)
            malformed.extend(problems)
            if not problems:
                out.extend(k8s.runtimes(item, p.path, doc.line, cms))
        if compose.is_compose_path(p.path) or compose.looks_like_compose(doc.data):
            wrong = shape.compose_problems(doc.data, doc.line)
            malformed.extend(m for problems in wrong.values() for m in problems)
            if "" not in wrong:
                out.extend(compose.runtimes(doc.data, p.path, frozenset(wrong)))
        elif helm.is_values_path(p.path):
            out.extend(helm.runtimes(doc.data, p.path))
    return out, malformed


def _failure_record(p: _Parsed, malformed: Sequence[shape.Malformed]) -> FileRecord:
    """FAILED with every wrong-typed node by line, then the YAML error (it follows every document read);
    SKIPPED when template syntax explains the wrong types."""
    reason = "; ".join([*(m.reason for m in sorted(malformed, key=lambda m: m.line)), *([p.failure] if p.failure else [])])
    if p.templated:
        return _record(p.path, FileStatus.SKIPPED, f"{TEMPLATE_SYNTAX_REASON}: {reason}")
    return _record(p.path, FileStatus.FAILED, reason)


def _with_service(dep: Deployment, rt: Runtime, repo: RepoContext) -> Deployment:
    """A compose service built from a directory of the repo belongs to the service of that directory."""
    if rt.build_context is None:
        return dep
    context = posixpath.normpath(posixpath.join(posixpath.dirname(rt.path), rt.build_context))
    if context.startswith(".."):
        return dep
    marker = f"{context}/Dockerfile" if context != "." else "Dockerfile"
    return dep.model_copy(update={"service": service_for(marker, repo.paths | {marker}, repo.repo, repo.config)})


def _record(path: str, status: FileStatus, reason: str) -> FileRecord:
    return FileRecord(path=path, status=status, reason=reason, extractor=NAME)


def _template_note(path: str, repo: str) -> Finding:
    return Finding(
        rule=TEMPLATE_RULE,
        severity=Severity.NOTE,
        message=f"{path} is a Helm template and is not rendered: the JVM options, mounts and client identity it sets "
        "are unknown, so SG301/SG302 cannot judge the consumers it runs (values files are read as data)",
        location=Location(path=path, line=1, repo=repo),
        fingerprint=fingerprint(TEMPLATE_RULE, repo, path, "helm-template"),
    )


EXTRACTOR = ManifestsExtractor()
