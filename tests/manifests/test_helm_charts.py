"""Helm charts (issue 18, item 4): rendered with `helm template` when a helm binary is there, one
note per chart otherwise, and only when a consumer of the repo could run in it.

tests/fixtures/helm/shop is a repo of two services as top-level folders (no build files), each with
a BROADCASTING consumer and a chart:

- price-service/helm/price-service renders (helpers, `nindent`, `.Release.Namespace`, a hook Job
  that `--no-hooks` leaves out); its container keeps offsets on an emptyDir: SG301 at the template
  line of the container;
- quote-service/chart cannot render (`required`-style nil value): it falls back to its values read
  as data, and one note says why.

The rendering tests use the real helm binary (.ci/run installs one: .ci/install_helm.py) and are
skipped where there is none; `SUBGUARD_HELM=off` gives the run without helm on any machine.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from subguard.core import tools
from subguard.core.config import Config
from subguard.core.model import FileStatus, Finding
from subguard.extract.manifests import helm_render
from subguard.scan.extraction import scan_repo
from tests.engine.test_rule_fixtures import judge

SHOP = Path(__file__).resolve().parents[1] / "fixtures" / "helm" / "shop"
PRICE_CHART = "price-service/helm/price-service"
QUOTE_CHART = "quote-service/chart"
HELM = tools.helm_binary() or shutil.which("helm")
needs_helm = pytest.mark.skipif(HELM is None, reason="no helm binary (.ci/run installs one with .ci/install_helm.py)")


def found(findings: list[Finding]) -> list[tuple[str, str, int]]:
    return sorted(
        (f.rule, f.location.path, f.location.line)
        for f in findings
        if f.suppressed is None and f.rule in ("SG301", "SG302", "SG901", "SG904")
    )


def test_without_helm_one_note_per_chart_and_values_as_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tools.HELM_ENV, "off")
    findings = judge(SHOP)
    assert found(findings) == [
        ("SG301", f"{PRICE_CHART}/values.yaml", 1),  # read as data: javaOpts, no volume at /scratch
        ("SG301", f"{QUOTE_CHART}/values.yaml", 1),
        ("SG901", f"{PRICE_CHART}/Chart.yaml", 1),  # one note per chart, not one per template (3 here)
        ("SG901", f"{QUOTE_CHART}/Chart.yaml", 1),
    ]
    [note] = [f for f in findings if f.rule == "SG901" and f.location.path.startswith(PRICE_CHART)]
    assert (
        "Helm chart price-service/helm/price-service is not rendered (no helm binary on PATH; install helm or set SUBGUARD_HELM)"
        in note.message
    )
    records = {r.path: r for r in scan_repo(SHOP, Config()).files}
    assert records[f"{PRICE_CHART}/templates/deployment.yaml"].status is FileStatus.SKIPPED


@needs_helm
def test_with_helm_the_chart_is_rendered_and_located_at_its_template(monkeypatch: pytest.MonkeyPatch) -> None:
    assert HELM is not None
    monkeypatch.setenv(tools.HELM_ENV, HELM)
    findings = judge(SHOP)
    assert found(findings) == [
        ("SG301", f"{PRICE_CHART}/templates/deployment.yaml", 19),  # `- name: {{ .Chart.Name }}`
        ("SG301", f"{QUOTE_CHART}/values.yaml", 1),  # its chart did not render: values as data
        ("SG901", f"{QUOTE_CHART}/Chart.yaml", 1),
    ]
    [sg301] = [f for f in findings if f.rule == "SG301" and "price" in f.location.path]
    assert "Deployment 'price-service'" in sg301.message and "emptyDir 'scratch'" in sg301.message
    [note] = [f for f in findings if f.rule == "SG901"]
    assert (
        "(helm template failed: " in note.message and "quote-service/templates/statefulset.yaml:13:104" in note.message
    )
    assert "nil pointer" in note.message and "kubeconfig" not in note.message  # helm 3 logs a warning first
    result = scan_repo(SHOP, Config())
    records = {r.path: r for r in result.files}
    assert records[f"{PRICE_CHART}/templates/deployment.yaml"].status is FileStatus.PARSED
    assert records[f"{PRICE_CHART}/values.yaml"].reason.startswith("default values of a chart rendered")
    assert records[f"{QUOTE_CHART}/templates/statefulset.yaml"].status is FileStatus.SKIPPED
    rendered = [d for d in result.deployments if d.location.path.startswith(PRICE_CHART)]
    # the hook Job is not rendered (--no-hooks), nor the Service (no container)
    assert [(d.kind, d.name, d.location.path) for d in rendered] == [
        ("Deployment", "price-service", f"{PRICE_CHART}/templates/deployment.yaml")
    ]
    assert records[f"{PRICE_CHART}/values-prod.yaml"].reason == ""  # other values files are still read as data
    [dep] = [d for d in rendered if d.kind == "Deployment"]
    assert dep.namespace == "" and dep.environment == ""  # helm's `default` namespace is no environment
    assert dep.service == "shop/price-service/helm/price-service" and dep.replicas == 2
    assert helm_render.RENDERED_NOTE in dep.notes


def test_no_note_when_no_consumer_could_run_in_the_chart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CLUSTERING consumers only: SG301/SG302 judge no deployment, so an unrendered chart hides nothing."""
    monkeypatch.setenv(tools.HELM_ENV, "off")
    repo = tmp_path / "shop"
    shutil.copytree(SHOP / "price-service", repo / "price-service")
    java = repo / "price-service/src/main/java/com/acme/price/PriceCache.java"
    java.write_text(java.read_text().replace("MessageModel.BROADCASTING", "MessageModel.CLUSTERING"))
    assert [f for f in judge(repo) if f.rule == "SG901"] == []


@needs_helm
def test_render_time_limit_and_missing_chart_file(tmp_path: Path) -> None:
    assert HELM is not None
    files = {p.relative_to(SHOP).as_posix(): p.read_bytes() for p in SHOP.rglob("*") if p.is_file()}
    [chart] = [c for c in helm_render.find_charts(files) if c.root == PRICE_CHART]
    slow = helm_render.render(chart, files, files.get, HELM, timeout=0.001)
    assert not slow.ok and "ran over" in slow.error
    ok = helm_render.render(chart, files, files.get, HELM)
    assert ok.ok and [d.source for d in ok.documents] == [
        f"{PRICE_CHART}/templates/service.yaml",
        f"{PRICE_CHART}/templates/deployment.yaml",
    ]
    bare = helm_render.Chart("x", "")
    assert helm_render.render(bare, files, files.get, HELM).error == "no Chart.yaml"


def test_find_charts_subcharts_and_bare_templates() -> None:
    paths = [
        "a/Chart.yaml",
        "a/templates/d.yaml",
        "a/charts/sub/Chart.yaml",
        "a/charts/sub/templates/s.yaml",
        "ops/templates/y.yaml",  # no Chart.yaml: a chart nothing can render
    ]
    charts = helm_render.find_charts(paths)
    assert [(c.root, c.chart_file) for c in charts] == [("a", "a/Chart.yaml"), ("ops", "")]
    assert helm_render.chart_of("a/charts/sub/templates/s.yaml", charts) == helm_render.Chart("a", "a/Chart.yaml")
    # a chart at the repo root holds every file; charts/ below it are its subcharts
    at_root = helm_render.find_charts(
        ["Chart.yaml", "templates/x.yaml", "charts/dep/Chart.yaml", "ops/templates/y.yaml"]
    )
    assert at_root == [helm_render.Chart("", "Chart.yaml")]
    assert helm_render.release_name(b"apiVersion: v2\nname: Price_Service\n", "x/price") == "price"
    assert helm_render.release_name(b"name: quote-service\n", "chart") == "quote-service"


def test_split_documents_and_map_line() -> None:
    out = "---\n# Source: web/templates/a.yaml\nkind: A\n---\n# Source: web/charts/db/templates/b.yaml\nkind: B\n---\n# Source: web/templates/empty.yaml\n"
    docs = helm_render.split_documents(out, "deploy/web")
    assert [(d.source, d.text.splitlines()[-1]) for d in docs] == [
        ("deploy/web/templates/a.yaml", "kind: A"),
        ("deploy/web/charts/db/templates/b.yaml", "kind: B"),
    ]
    template = 'kind: Deployment\nmetadata:\n  labels:\n    {{- include "l" . | nindent 4 }}\nspec:\n  containers:\n    - name: {{ .Chart.Name }}\n      image: x\n'
    rendered = "# Source: c/templates/d.yaml\nkind: Deployment\nmetadata:\n  labels:\n    a: 1\n    b: 2\n    c: 3\nspec:\n  containers:\n    - name: c\n      image: x\n"
    lines = rendered.splitlines()
    assert helm_render.map_line(rendered, template, lines.index("    - name: c") + 1) == 7
    assert helm_render.map_line(rendered, template, lines.index("spec:") + 1) == 5
    assert helm_render.map_line(rendered, template, lines.index("    c: 3") + 1) == 4  # inside the include: its line
    assert helm_render.map_line(rendered, "", 3) == 1
