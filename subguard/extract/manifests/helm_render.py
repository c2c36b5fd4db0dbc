"""Helm charts rendered with `helm template`, when a helm binary is available (`core.tools.helm_binary`).

A chart is the folder of a `Chart.yaml` (a chart inside another chart's `charts/` folder is a
subchart: it is rendered with its parent). Its files are copied from the scan (never read from the
disk in place, so a git revision renders the same way) into a temporary folder, and rendered with:

    helm template <name> <copy> --no-hooks --skip-tests

- the chart's default values only (`values.yaml`; `values-prod.yaml` and the like stay data);
- no network: no `dependency update`, no repository, no plugins, no kubeconfig; helm's home,
  cache, config and data folders point into the temporary folder;
- a time limit (`RENDER_TIMEOUT`) and an output limit (`MAX_OUTPUT`, as a file-size limit);
- a chart whose rendering fails (a missing dependency, a `required` value, a template error, the
  time limit) falls back to being unrendered, with the first line of helm's error as the reason.

Each rendered document carries its template (`# Source: <chart>/templates/x.yaml`); its lines are
mapped back to the template's by aligning the two texts (`map_line`), so findings point at the
template line that produced a container.
"""

from __future__ import annotations

import difflib
import os
import posixpath
import re
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

RENDER_TIMEOUT = 30.0  # seconds per chart
MAX_OUTPUT = 32 * 1024 * 1024  # bytes of rendered YAML per chart
MAX_CHART_FILES = 2000
CHART_FILE = "Chart.yaml"
TEMPLATES = "templates"
_SOURCE_RE = re.compile(r"^# Source: (.+?)\s*$")
_RELEASE_RE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?$")
RENDERED_NOTE = "rendered by helm template with the chart's default values"


@dataclass(frozen=True)
class Chart:
    """A chart folder (repo-relative) and the name helm renders it under."""

    root: str
    chart_file: str  # root/Chart.yaml, or "" for a templates/ folder without one (never rendered)

    def holds(self, path: str) -> bool:
        return not self.root or path.startswith(self.root + "/")


@dataclass(frozen=True)
class Document:
    """One rendered document: the repo path of its template, and its text."""

    source: str
    text: str


@dataclass(frozen=True)
class Rendering:
    documents: tuple[Document, ...] = ()
    error: str = ""  # why it did not render ("" when it did)

    @property
    def ok(self) -> bool:
        return not self.error


def is_template_path(path: str) -> bool:
    return TEMPLATES in path.split("/")[:-1]


def find_charts(paths: Iterable[str]) -> list[Chart]:
    """The top-level charts of a repo (subcharts render with their parent), and the folders that
    hold a `templates/` folder with no Chart.yaml (rendered by nothing: noted as such)."""
    present = set(paths)
    roots = sorted(posixpath.dirname(p) for p in present if posixpath.basename(p) == CHART_FILE)
    charts = [
        Chart(root, posixpath.join(root, CHART_FILE) if root else CHART_FILE)
        for root in roots
        if not any(
            root.startswith(other + "/charts/") or (not other and root.startswith("charts/"))
            for other in roots
            if other != root
        )
    ]
    bare: set[str] = set()
    for p in present:
        if is_template_path(p) and not any(c.holds(p) for c in charts):
            segs = p.split("/")
            i = segs.index(TEMPLATES)
            bare.add("/".join(segs[:i]))
    return charts + [Chart(root, "") for root in sorted(bare)]


def chart_of(path: str, charts: Sequence[Chart]) -> Chart | None:
    """The chart a file belongs to (the outermost: a subchart's files render with their parent)."""
    holding = [c for c in charts if c.holds(path)]
    return min(holding, key=lambda c: c.root.count("/") if c.root else -1) if holding else None


def release_name(chart_yaml: bytes, root: str) -> str:
    """Chart.yaml's `name` when it is a valid release name, else the folder's, else `release`."""
    found = re.search(rb"(?m)^name:\s*['\"]?([A-Za-z0-9._-]+)", chart_yaml)
    for name in (found.group(1).decode("ascii", "replace").lower() if found else "", posixpath.basename(root).lower()):
        if _RELEASE_RE.match(name):
            return name
    return "release"


def _limit_output() -> None:  # pragma: no cover - runs in the child between fork and exec
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_OUTPUT, MAX_OUTPUT))


def render(
    chart: Chart, paths: Iterable[str], read: Callable[[str], bytes | None], helm: str, timeout: float = RENDER_TIMEOUT
) -> Rendering:
    """`helm template` over a copy of the chart's files; never raises."""
    if not chart.chart_file:
        return Rendering(error="no Chart.yaml")
    files = sorted(p for p in paths if chart.holds(p))
    if len(files) > MAX_CHART_FILES:
        return Rendering(error=f"more than {MAX_CHART_FILES} files")
    chart_yaml = read(chart.chart_file)
    if chart_yaml is None:
        return Rendering(error="Chart.yaml cannot be read")
    prefix = chart.root + "/" if chart.root else ""
    with tempfile.TemporaryDirectory(prefix="subguard-helm-") as tmp:
        copy = os.path.join(tmp, "chart")
        home = os.path.join(tmp, "home")
        for p in files:
            rel = p[len(prefix) :]
            data = read(p)
            if data is None or rel.startswith("/") or ".." in rel.split("/"):
                continue
            target = os.path.join(copy, *rel.split("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as fh:
                fh.write(data)
        os.makedirs(home)
        with open(
            os.path.join(home, "kubeconfig"), "wb"
        ):  # empty: no cluster, and no "Config not found" warning (helm 3)
            pass
        env = {
            "HOME": home,
            "HELM_CACHE_HOME": os.path.join(home, "cache"),
            "HELM_CONFIG_HOME": os.path.join(home, "config"),
            "HELM_DATA_HOME": os.path.join(home, "data"),
            "HELM_PLUGINS": os.path.join(home, "plugins"),
            "KUBECONFIG": os.path.join(home, "kubeconfig"),
            "LANG": "C",
            "PATH": "/usr/bin:/bin",
        }
        out_path = os.path.join(tmp, "rendered.yaml")
        argv = [helm, "template", release_name(chart_yaml, chart.root), copy, "--no-hooks", "--skip-tests"]
        try:
            with open(out_path, "wb") as out:
                proc = subprocess.run(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.PIPE,
                    env=env,
                    cwd=tmp,
                    timeout=timeout,
                    preexec_fn=_limit_output,
                    check=False,
                )  # noqa: PLW1509 - sets a file-size limit only
        except subprocess.TimeoutExpired:
            return Rendering(error=f"helm template ran over {timeout:g} s")
        except OSError as exc:
            return Rendering(error=f"helm could not be run: {exc.strerror or exc}")
        if proc.returncode != 0:
            return Rendering(error=_first_error(proc.stderr, proc.returncode, out_path))
        with open(out_path, "rb") as fh:
            text = fh.read().decode("utf-8", "replace")
    return Rendering(tuple(split_documents(text, chart.root)))


def _first_error(stderr: bytes, code: int, out_path: str) -> str:
    if code < 0 and os.path.getsize(out_path) >= MAX_OUTPUT:
        return f"helm template printed more than {MAX_OUTPUT // (1024 * 1024)} MiB"
    lines = [
        ln.strip()
        for ln in stderr.decode("utf-8", "replace").splitlines()
        if ln.strip() and not ln.startswith("WARNING")
    ]
    lines = lines[next((i for i, ln in enumerate(lines) if ln.startswith("Error:")), 0) :]  # after any log lines (klog)
    lines = [ln for ln in lines[:4] if not ln.startswith("Use --debug")]  # helm 4 splits one error over lines
    first = " ".join(lines).removeprefix("Error: ") if lines else f"exit status {code}"
    return "helm template failed: " + (first if len(first) <= 300 else first[:297] + "...")


def split_documents(text: str, root: str) -> list[Document]:
    """The documents of `helm template` output, each with its template's repo path (the chart's name,
    the first segment of `# Source:`, is replaced by the chart's folder)."""
    out: list[Document] = []
    current: list[str] = []

    def flush() -> None:
        source = next((m.group(1) for ln in current[:3] if (m := _SOURCE_RE.match(ln))), None)
        if source is not None and any(ln.strip() and not ln.startswith("#") for ln in current):
            rel = source.split("/", 1)[1] if "/" in source else source
            out.append(Document(posixpath.join(root, rel) if root else rel, "\n".join(current) + "\n"))

    for line in text.splitlines():
        if line.rstrip() == "---":
            flush()
            current = []
        else:
            current.append(line)
    flush()
    return out


def map_line(rendered: str, template: str, line: int) -> int:
    """The template line that produced line `line` (1-based) of a rendered document: the nearest
    rendered line at or above it that appears unchanged in the template, plus the distance to it
    (bounded by the next unchanged line). Lines are compared stripped (`nindent` moves them)."""
    r_lines = [ln.strip() for ln in rendered.splitlines()]
    t_lines = [ln.strip() for ln in template.splitlines()]
    if not t_lines:
        return 1
    anchors: list[tuple[int, int]] = []
    for block in difflib.SequenceMatcher(None, r_lines, t_lines, autojunk=False).get_matching_blocks():
        anchors.extend((block.a + k, block.b + k) for k in range(block.size) if r_lines[block.a + k])
    index = line - 1
    before = [a for a in anchors if a[0] <= index]
    after = [a for a in anchors if a[0] > index]
    if not before:
        target = min(index, (after[0][1] - 1) if after else index)
    else:
        r0, t0 = before[-1]
        target = t0 + (index - r0)
        if after and index != r0:
            target = min(target, after[0][1] - 1)
        target = max(target, t0)
    return max(1, min(target, len(t_lines) - 1) + 1)
