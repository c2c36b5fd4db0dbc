"""The manifests extractor: Kubernetes workloads, Helm values, docker-compose files and Dockerfiles
become `Deployment` records (one per container).

Claims every `*.yaml`/`*.yml` not claimed earlier (it is registered last) and every Dockerfile.
`needles` is empty on purpose: the facts it needs (`-D` options, mounts, hostNetwork, HOME) carry
no RocketMQ marker, and a Helm template must be seen to be recorded as not rendered. The cost is
bounded by the few YAML files a repo has; files that are not manifests parse to nothing.

Helm charts are rendered with `helm template` when a helm binary is available (`helm_render`): the
rendered workloads are read like any manifest, located at the template line that produced them, and
the chart's default `values.yaml` is not read again as data. Otherwise (no helm, or the rendering
failed) the templates (`templates/*.yaml` with `{{ }}`) are skipped with the reason "Helm template,
not rendered", and one SG901 note per chart says its facts are missing, only when a template
describes a container and a consumer of the repo could run in it (its model is BROADCASTING or
unknown: only SG301/SG302 judge deployments).

A document whose top-level `kind` is `CustomResourceDefinition` (the OpenAPI schema of a custom
resource, often megabytes: an operator's install file) is not parsed (`yaml_docs.without_schemas`);
a file of nothing else is SKIPPED with that reason.

A file is FAILED (SG901, at the first line named) when its YAML breaks off or a workload in it has
wrong-typed nodes (`manifest_shape`); the reason names each, `line N: Deployment 'x': spec is an int,
expected a mapping` (SKIPPED instead when the file holds `{{ }}`, whose rendering would explain
them). Such a workload is not read; the documents before the break and the other workloads are.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from subguard.core import tools
from subguard.core.limits import ParseTimeout, time_budget
from subguard.core.model import (
    Deployment,
    FileRecord,
    FileStatus,
    Finding,
    Location,
    MessageModel,
    Severity,
    fingerprint,
)
from subguard.deploy.manifest_values import Runtime, to_deployment
from subguard.deploy.service import is_dockerfile_path, service_for
from subguard.extract import NEEDLES
from subguard.extract.base import ExtractResult, RepoContext, SourceFile
from subguard.extract.manifests import compose, docker, helm, helm_render, k8s, shape
from subguard.extract.manifests.yaml_docs import Document, as_map, load_documents, without_schemas

NAME = "manifests"
TEMPLATE_RULE = "SG901"
TEMPLATE_REASON = "Helm template, not rendered"
RENDERED_REASON = "Helm template, " + helm_render.RENDERED_NOTE
DEFAULT_VALUES_REASON = "default values of a chart rendered by helm template (read through the rendering)"
DEFAULT_VALUES = frozenset({"values.yaml", "values.yml"})
TEMPLATE_SYNTAX_REASON = "template syntax ({{ }}), not rendered"
# Words that make a skipped template matter: it describes a container whose facts SG301/SG302 need.
NOT_A_MANIFEST = "YAML without kind or services (not a manifest)"
SCHEMAS_REASON = "CustomResourceDefinition documents only (schemas of custom resources, not workloads)"
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
    needles: tuple[bytes, ...] = NEEDLES[NAME]

    def claims(self, path: str) -> bool:
        return _is_yaml(path) or is_dockerfile_path(path)

    def extract(self, files: Sequence[SourceFile], repo: RepoContext) -> ExtractResult:
        records: list[FileRecord] = []
        findings: list[Finding] = []
        parsed: list[_Parsed] = []
        runtimes: list[Runtime] = []
        charts = helm_render.find_charts(repo.paths)
        renderings = _render_charts(charts, files, repo)
        unrendered: dict[str, str] = {}  # chart root -> first template that describes a container
        for f in files:
            try:
                text = f.text()
            except UnicodeDecodeError as exc:
                records.append(_record(f.path, FileStatus.FAILED, f"not UTF-8 text (byte {exc.start})"))
                continue
            if is_dockerfile_path(f.path):
                rt = docker.parse(text, f.path)
                if rt is None:
                    records.append(_record(f.path, FileStatus.SKIPPED, "Dockerfile without FROM"))
                else:
                    runtimes.append(rt)
                continue
            chart = helm_render.chart_of(f.path, charts)
            rendering = renderings.get(chart.root) if chart is not None else None
            if rendering is not None and rendering.ok and helm_render.is_template_path(f.path):
                records.append(_record(f.path, FileStatus.PARSED, RENDERED_REASON))
                continue
            if (
                rendering is not None
                and rendering.ok
                and posixpath.basename(f.path) in DEFAULT_VALUES
                and posixpath.join(posixpath.dirname(f.path), helm_render.CHART_FILE) in repo.paths
            ):
                records.append(_record(f.path, FileStatus.PARSED, DEFAULT_VALUES_REASON))
                continue
            templated = helm.TEMPLATE_MARK in f.data
            if templated and helm.is_template_path(f.path):
                records.append(_record(f.path, FileStatus.SKIPPED, TEMPLATE_REASON))
                if chart is not None and any(w in f.data for w in _TEMPLATE_RELEVANT):
                    unrendered.setdefault(chart.root, f.path)
                continue
            if not (
                templated
                or any(m in f.data for m in _MANIFEST_MARKS)
                or compose.is_compose_path(f.path)
                or helm.is_values_path(f.path)
            ):
                # only a `kind:` (workload, ConfigMap, List) or a `services:` (compose) makes a runtime:
                # the line-numbering loader costs ~5 ms a file, and most YAML of a monorepo is settings
                records.append(_record(f.path, FileStatus.SKIPPED, NOT_A_MANIFEST))
                continue
            try:
                with time_budget(repo.config.parse_timeout):
                    text, schemas = without_schemas(text)
                    docs, failure = load_documents(text)
            except ParseTimeout as exc:
                records.append(_record(f.path, FileStatus.FAILED, str(exc)))
                continue
            if schemas and not docs and failure is None:
                records.append(_record(f.path, FileStatus.SKIPPED, SCHEMAS_REASON))
                continue
            if failure is not None and templated:
                records.append(_record(f.path, FileStatus.SKIPPED, f"{TEMPLATE_SYNTAX_REASON} (line {failure.line})"))
                continue
            parsed.append(
                _Parsed(f.path, tuple(docs), f"{failure.reason} (line {failure.line})" if failure else "", templated)
            )
        rendered = _rendered_documents(renderings, files, repo)
        cms = k8s.ConfigMaps(
            {
                key: data
                for docs in [*(p.docs for p in parsed), *(docs for _, _, docs in rendered)]
                for d in docs
                for item in k8s.expand_lists(d.data)
                if (cm := k8s.config_map(item))
                for key, data in [cm]
            }
        )
        for p in parsed:
            found, malformed = _yaml_runtimes(p, cms)
            runtimes.extend(found)
            if malformed or p.failure:
                records.append(_failure_record(p, malformed))
        for doc, template, docs in rendered:
            runtimes.extend(_rendered_runtimes(doc, template, docs, cms))
        if unrendered and _could_run_a_broadcaster(repo):
            by_root = {c.root: c for c in charts}
            findings.extend(
                _chart_note(by_root[root], first, renderings.get(root), repo.repo)
                for root, first in sorted(unrendered.items())
            )
        deployments = [_with_service(to_deployment(rt), rt, repo) for rt in runtimes]
        return ExtractResult(
            deployments=tuple(deployments),
            files=tuple(records),
            findings=tuple(findings),
            facts={"depends": _module_depends(repo)} if deployments else {},
        )


def _module_depends(repo: RepoContext) -> dict[str, tuple[str, ...]]:
    """Module dir -> the repo's module dirs it depends on (`RepoBuilds.dependencies`): which modules'
    consumers a deployment of a module runs. Read only when the repo has deployments."""
    from subguard.extract.build import RepoBuilds

    return RepoBuilds(repo).dependencies()


def _render_charts(
    charts: Sequence[helm_render.Chart], files: Sequence[SourceFile], repo: RepoContext
) -> dict[str, helm_render.Rendering]:
    """Every chart with a Chart.yaml, rendered when helm is available ({} without helm)."""
    binary = tools.helm_binary()
    if binary is None:
        return {}
    given = {f.path: f.data for f in files}

    def read(path: str) -> bytes | None:
        return given[path] if path in given else repo.read(path)

    return {c.root: helm_render.render(c, repo.paths, read, binary) for c in charts if c.chart_file}


def _rendered_documents(
    renderings: dict[str, helm_render.Rendering], files: Sequence[SourceFile], repo: RepoContext
) -> list[tuple[helm_render.Document, str, list[Document]]]:
    """(rendered document, its template's text, its parsed YAML) for every chart that rendered."""
    given = {f.path: f.data for f in files}
    out: list[tuple[helm_render.Document, str, list[Document]]] = []
    for rendering in renderings.values():
        for doc in rendering.documents:
            raw = given.get(doc.source) or repo.read(doc.source) or b""
            docs, _ = load_documents(doc.text)
            for d in docs:
                meta = as_map(as_map(d.data).get("metadata"))
                if meta.get("namespace") == "default":  # helm's own default, not an environment the chart names
                    del meta["namespace"]
            out.append((doc, raw.decode("utf-8", "replace"), docs))
    return out


def _rendered_runtimes(
    doc: helm_render.Document, template: str, docs: Sequence[Document], cms: k8s.ConfigMaps
) -> list[Runtime]:
    """The workloads of one rendered document, located at the template lines that produced them."""
    out: list[Runtime] = []
    for d in docs:
        for item in k8s.expand_lists(d.data):
            if k8s.is_workload(item) and not shape.workload_problems(item, d.line):
                for rt in k8s.runtimes(item, doc.source, d.line, cms):
                    line = helm_render.map_line(doc.text, template, rt.line) if template else 1
                    out.append(dataclasses.replace(rt, line=line, notes=(*rt.notes, helm_render.RENDERED_NOTE)))
    return out


def _could_run_a_broadcaster(repo: RepoContext) -> bool:
    """A consumer of the repo whose model is BROADCASTING or unknown: only SG301/SG302 judge deployments."""
    return any(
        c.message_model.value == MessageModel.BROADCASTING.value or not c.message_model.known
        for result in repo.prior.values()
        for c in result.consumers
    )


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
    reason = "; ".join(
        [*(m.reason for m in sorted(malformed, key=lambda m: m.line)), *([p.failure] if p.failure else [])]
    )
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


def _chart_note(
    chart: helm_render.Chart, first_template: str, rendering: helm_render.Rendering | None, repo: str
) -> Finding:
    """One note per chart whose templates were not rendered (at its Chart.yaml, else its first template)."""
    if rendering is not None:
        why = rendering.error
    elif not chart.chart_file:
        why = "no Chart.yaml beside its templates/ folder"
    else:
        why = f"no helm binary on PATH; install helm or set {tools.HELM_ENV}"
    name = chart.root or "."
    return Finding(
        rule=TEMPLATE_RULE,
        severity=Severity.NOTE,
        message=f"Helm chart {name} is not rendered ({why}): the JVM options, mounts and client identity its templates set "
        "are unknown, so SG301/SG302 cannot judge the consumers it runs (values files are read as data)",
        location=Location(path=chart.chart_file or first_template, line=1, repo=repo),
        fingerprint=fingerprint(TEMPLATE_RULE, repo, name, "helm-chart"),
    )


EXTRACTOR = ManifestsExtractor()
