"""report.html: one self-contained page (inline CSS, JS and SVG; nothing fetched) from the summary."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
header{background:#1d2b3a;color:#fff;padding:18px 28px}header h1{margin:0;font-size:22px}
header p{margin:4px 0 0;color:#b8c4d0}main{padding:18px 28px;max-width:1400px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:8px 0 18px}.card{background:#fff;border-radius:8px;padding:10px 16px;
box-shadow:0 1px 2px #0002;min-width:120px}.card b{display:block;font-size:24px}.card span{color:#5b6673;font-size:12px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(360px,1fr));gap:14px}.chart{background:#fff;
border-radius:8px;padding:10px 14px;box-shadow:0 1px 2px #0002}.chart h3{margin:0 0 6px;font-size:14px}
section.group{background:#fff;border-radius:8px;padding:12px 16px;margin:14px 0;box-shadow:0 1px 2px #0002}
section.group h3{margin:0;font-size:16px;font-family:ui-monospace,monospace}.sev-error{color:#b42318}.sev-warning{color:#b54708}
.badge{display:inline-block;border-radius:10px;padding:0 8px;margin-left:6px;font-size:12px;background:#eef1f4}
table{border-collapse:collapse;width:100%;margin-top:8px;font-size:13px}th,td{border-bottom:1px solid #e4e7ec;padding:4px 6px;
text-align:left;vertical-align:top}th{background:#f2f4f7}code{font-family:ui-monospace,monospace;background:#f2f4f7;padding:0 3px}
.impact{margin-top:8px;color:#344054}.warn{background:#fff4e5;border-left:4px solid #f79009;padding:8px 12px;margin:10px 0}
input#filter{padding:6px 10px;width:320px;border:1px solid #cfd4dc;border-radius:6px}
"""

JS = """
document.getElementById('filter').addEventListener('input', function (e) {
  var q = e.target.value.toLowerCase();
  document.querySelectorAll('section.group').forEach(function (s) {
    s.style.display = s.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
  });
});
"""


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def bar_chart(title: str, items: Sequence[tuple[str, float]], chart_id: str, unit: str = "") -> str:
    """A horizontal SVG bar chart; one bar per (label, value)."""
    if not items:
        return f'<div class="chart" id="{chart_id}"><h3>{esc(title)}</h3><p>none</p></div>'
    top = max(v for _, v in items) or 1
    row, width, label_w = 22, 520, 170
    bars = []
    for i, (label, value) in enumerate(items):
        y = i * row
        w = max(2.0, (width - label_w - 60) * value / top)
        shown = f"{value:g}{unit}"
        bars.append(
            f'<g class="bar" data-label="{esc(label)}" data-value="{value:g}"><text x="{label_w - 6}" y="{y + 15}" '
            f'text-anchor="end" font-size="12">{esc(label)}</text><rect x="{label_w}" y="{y + 4}" width="{w:.1f}" '
            f'height="14" fill="#2e90fa"/><text x="{label_w + w + 4:.1f}" y="{y + 15}" font-size="12">{esc(shown)}</text></g>'
        )
    height = row * len(items) + 4
    return (
        f'<div class="chart" id="{chart_id}"><h3>{esc(title)}</h3><svg role="img" aria-label="{esc(title)}" '
        f'width="100%" style="max-width:{width}px" viewBox="0 0 {width} {height}" preserveAspectRatio="xMinYMin meet">{"".join(bars)}</svg></div>'
    )


def _card(label: str, value: Any, card_id: str) -> str:
    return f'<div class="card"><b id="{card_id}">{esc(value)}</b><span>{esc(label)}</span></div>'


def _loss_items(impact: Mapping[str, Any]) -> list[tuple[str, float]]:
    """Per-tag shares from the simulator (`GroupImpact`): lost, and left in queues nobody pulls."""
    result = impact.get("result") or {}
    items: list[tuple[str, float]] = []
    for key, suffix in (("loss", "lost"), ("stuck", "never pulled")):
        for pair in result.get(key) or ():
            if isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[1], (int, float)) and pair[1] > 0:
                items.append((f"{pair[0]} ({suffix})", round(100 * float(pair[1]), 1)))
    return sorted(items, key=lambda kv: -kv[1])


def _group(g: Mapping[str, Any], index: int) -> str:
    sev = "error" if g.get("worst") == 3 else "warning" if g.get("worst") == 2 else "note"
    rules = " ".join(f'<span class="badge">{esc(r)}</span>' for r in g.get("rules") or [])
    rows = "".join(
        "<tr>" + "".join(f"<td>{c}</td>" for c in (
            esc(m.get("repo")), esc(m.get("team")), esc(m.get("environment")), esc(m.get("service")), esc(m.get("client")),
            esc(m.get("message_model")), f"<code>{esc(m.get('topic'))}</code>",
            f"<code>{esc(m.get('expression'))}</code>" if m.get("expression") is not None else "<i>unknown</i>",
            f"{esc(m.get('path'))}:{esc(m.get('line'))}",
        )) + "</tr>"
        for m in g.get("members") or []
    )
    impact = g.get("impact") or {}
    loss = _loss_items(impact)
    impact_html = f'<div class="impact">{esc(impact.get("description"))}</div>' if impact.get("description") else ""
    if loss:
        runs = impact.get("runs") or (impact.get("result") or {}).get("runs")
        title = "Simulated loss per tag (% of messages" + (f", {runs} runs)" if runs else ")")
        impact_html += bar_chart(title, loss, f"loss-{index}", "%")
    return (
        f'<section class="group" data-group="{esc(g.get("group"))}" data-repos="{esc(g.get("repos_count"))}" '
        f'data-findings="{esc(g.get("findings"))}"><h3 class="sev-{sev}">{esc(g.get("group"))}</h3>'
        f'<div>{esc(g.get("repos_count"))} repo(s): {esc(", ".join(g.get("repos") or []))} &middot; '
        f'{esc(g.get("consumers"))} consumer(s) &middot; {esc(g.get("errors"))} error(s), {esc(g.get("warnings"))} warning(s) {rules}</div>'
        "<table><thead><tr><th>repo</th><th>team</th><th>env</th><th>service</th><th>client</th><th>model</th><th>topic</th>"
        f"<th>expression</th><th>where</th></tr></thead><tbody>{rows}</tbody></table>{impact_html}</section>"
    )


def render(summary: Mapping[str, Any]) -> str:
    """The whole page. The summary is also embedded as JSON (`#summary-data`) for tools."""
    t, f, fnd = summary["totals"], summary["files"], summary["findings"]
    sev = fnd["by_severity"]
    cards = "".join((
        _card("repositories", t["repos"], "n-repos"), _card("files", f["total"], "n-files"),
        _card("parsed / skipped / failed", f"{f['parsed']} / {f['skipped']} / {f['failed']}", "n-file-status"),
        _card("consumers", t["consumers"], "n-consumers"), _card("groups", t["groups"], "n-groups"),
        _card("groups across repos", t["cross_repo_groups"], "n-cross"), _card("findings", fnd["active"], "n-findings"),
        _card("errors", sev["error"], "n-errors"), _card("warnings", sev["warning"], "n-warnings"),
    ))
    warn = ""
    if summary["missing_repos"] or summary["problems"] or f["failed"]:
        items = [f"missing repository <b>{esc(m['repo'])}</b>: {esc(m['uri'])}" for m in summary["missing_repos"]]
        items += [f"repository <b>{esc(r['repo'])}</b>: {esc(r['count'])} file(s) failed" for r in f["failed_by_repo"]]
        items += [esc(p) for p in summary["problems"]]
        warn = '<div class="warn" id="problems"><ul>' + "".join(f"<li>{i}</li>" for i in items) + "</ul></div>"
    charts = "".join((
        bar_chart("Findings by rule", [(r["rule"], r["count"]) for r in fnd["by_rule"]], "chart-rules"),
        bar_chart("Findings by team", [(r["team"], r["count"]) for r in fnd["by_team"]], "chart-teams"),
        bar_chart("Groups by number of repos", [(f"{g['repos']} repo(s)", g["groups"]) for g in summary["group_sizes"]], "chart-sizes"),
    ))
    groups = "".join(_group(g, i) for i, g in enumerate(summary["worst_groups"]))
    data = json.dumps(summary, sort_keys=True).replace("</", "<\\/")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>subguard audit</title>'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; script-src \'unsafe-inline\'; img-src data:">'
        f"<style>{CSS}</style></head><body><header><h1>subguard audit</h1><p>{esc(', '.join(summary['sources']))} &middot; "
        f"{esc(summary['seconds'])} s</p></header><main><div class=\"cards\">{cards}</div>{warn}<div class=\"charts\">{charts}</div>"
        f'<h2>Worst groups first</h2><input id="filter" placeholder="filter groups, repos, topics..." aria-label="filter">'
        f'<div id="groups">{groups}</div><script type="application/json" id="summary-data">{data}</script>'
        f"<script>{JS}</script></main></body></html>\n"
    )
