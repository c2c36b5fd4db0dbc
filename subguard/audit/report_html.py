"""report.html: one self-contained page (inline CSS, JS and SVG; nothing fetched) a platform team acts on.

What it shows comes from two places, both built from the audit's own records: the summary (the
KPI cards and charts: summary.json) and `report_data` (every finding in words: the rows of the
Parquet `findings` table that findings.json is rendered from, the flagged rows of the `groups`
table with their one prediction, owners, and the comparison with a previous audit). The data is
embedded as JSON (`#report-data`) and the page renders the groups and repositories it shows from
it, a page at a time, so that an organisation of 10,000 groups opens and filters without freezing.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from subguard.audit.codeowners import Owners
from subguard.core.members import MEMBERS, Member, members_of
from subguard.core.model import Finding, RuleDoc
from subguard.simulate.impact import _percent

GROUP_SCOPE = "group"
SEVERITY_RANK = {"error": 3, "warning": 2, "note": 1}

CSS = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
header{background:#1d2b3a;color:#fff;padding:16px 24px}header h1{margin:0;font-size:22px}
header p{margin:4px 0 0;color:#b8c4d0;overflow-wrap:anywhere}main{padding:14px 24px;max-width:1400px;overflow-wrap:anywhere}
h2{font-size:18px;margin:22px 0 8px}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0 14px}.card{background:#fff;border-radius:8px;padding:8px 14px;
box-shadow:0 1px 2px #0002;min-width:110px}.card b{display:block;font-size:22px}.card span{color:#5b6673;font-size:12px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:12px}.chart{background:#fff;
border-radius:8px;padding:10px 14px;box-shadow:0 1px 2px #0002;min-width:0}.chart h3,.chart h4{margin:0 0 6px;font-size:14px}
.chart svg{display:block;width:100%;height:auto}
section.group,section.repo,#changes{background:#fff;border-radius:8px;padding:12px 16px;margin:12px 0;box-shadow:0 1px 2px #0002;
min-width:0}
section.group>h3,section.repo>h3{margin:0;font-size:16px;font-family:ui-monospace,monospace;overflow-wrap:anywhere}
.sev-error{color:#b42318}.sev-warning{color:#b54708}.sev-note{color:#175cd3}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;background:#eef1f4;white-space:nowrap}
.badge.error{background:#fee4e2;color:#912018}.badge.warning{background:#fef0c7;color:#93370d}.badge.note{background:#d1e9ff;color:#194185}
.badge.new{background:#7a2e0e;color:#fff}.badge.supp{background:#eaecf0;color:#475467}
.meta{color:#475467;margin:4px 0;overflow-wrap:anywhere}
.wrap{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%;margin-top:6px;font-size:13px}th,td{border-bottom:1px solid #e4e7ec;padding:4px 6px;
text-align:left;vertical-align:top;overflow-wrap:anywhere}th{background:#f2f4f7;white-space:nowrap;overflow-wrap:normal}
code,pre{font-family:ui-monospace,monospace;background:#f2f4f7;padding:0 3px;overflow-wrap:anywhere}
pre{padding:6px 8px;white-space:pre-wrap;margin:4px 0;font-size:12.5px}
.finding{border-left:4px solid #d0d5dd;padding:6px 10px;margin:10px 0;background:#fcfcfd}
.finding.error{border-color:#d92d20}.finding.warning{border-color:#f79009}.finding.note{border-color:#2e90fa}
.finding.suppressed{opacity:.65}
.finding .head{display:flex;flex-wrap:wrap;gap:6px;align-items:baseline}.finding .rname{color:#475467}
.finding .who{margin-left:auto;color:#475467;font-size:12px}
.finding p.msg{margin:4px 0;overflow-wrap:anywhere}.finding ul.cited{margin:4px 0;padding-left:18px}
.finding ul.cited li{overflow-wrap:anywhere}
.instead{margin:4px 0}.instead b{font-size:12px;color:#475467}
details.doc summary{cursor:pointer;color:#175cd3;font-size:12.5px}details.doc h5{margin:8px 0 2px;font-size:12.5px}
details.doc p{margin:2px 0;white-space:pre-wrap}
.figure{margin:8px 0;padding:6px 10px;background:#f8f9fc;border-radius:6px}.figure .chart{max-width:560px;box-shadow:none;padding:6px 0 0;background:none}
.warn{background:#fff4e5;border-left:4px solid #f79009;padding:8px 12px;margin:10px 0;overflow-wrap:anywhere}
.toolbar{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:6px 0;position:sticky;top:0;background:#f6f7f9;
padding:6px 0;z-index:2}
.toolbar input[type=search]{padding:6px 10px;width:360px;max-width:100%;border:1px solid #cfd4dc;border-radius:6px;font:inherit}
.toolbar select{padding:5px;border:1px solid #cfd4dc;border-radius:6px;max-width:100%;font:inherit}
#shown{color:#475467;font-size:13px}
.pager{display:flex;gap:8px;align-items:center;margin:8px 0}.pager button{font:inherit;padding:3px 10px}
.headline{font-size:20px;margin:0 0 6px}.headline.bad{color:#b42318}.headline.good{color:#067647}
.changes-grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:12px}
.trend{max-width:600px;margin-top:12px}
.also{color:#475467;font-size:13px}
a{color:#175cd3}
@media (max-width:600px){header,main{padding-left:10px;padding-right:10px}section.group,section.repo,#changes{padding:10px}
.finding .who{margin-left:0}.card{min-width:0;flex:1 1 40%}}
"""

JS = r"""
(function () {
  var D = JSON.parse(document.getElementById('report-data').textContent), S = D.strings;
  var INTERNED = %(interned)s;
  function obj(values, cols) {
    var o = {};
    cols.forEach(function (c, i) { o[c] = INTERNED[c] ? S[values[i]] : values[i]; });
    return o;
  }
  function str(i) { return S[i]; }
  D.findings = D.findings.map(function (v) {
    var f = obj(v, %(finding_cols)s);
    f.members = f.members.map(function (m) { return obj(m, %(member_cols)s); });
    f.codeowners = f.codeowners.map(str);
    return f;
  });
  D.groups = D.groups.map(function (v) {
    var g = obj(v, %(group_cols)s);
    g.repos = g.repos.map(str); g.owners = g.owners.map(str); g.topics = g.topics.map(str);
    g.loss = g.loss.map(function (x) { return [S[x[0]], x[1]]; });
    g.members = g.members.map(function (m) { return m.map(function (x, i) { return i === 9 ? x : S[x]; }); });
    return g;
  });
  var PAGE = 20, state = {q: '', owner: '', onlyNew: false, gpage: 0, rpage: 0};
  var F = D.findings, R = D.rules;
  function esc(v) {
    return String(v == null ? '' : v).replace(/[&<>"']/g, function (c) {
      return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c];
    });
  }
  function bar(title, items, id, unit) {
    var top = 0, row = 22, width = 520, lw = 170, out = [];
    items.forEach(function (it) { top = Math.max(top, it[1]); });
    top = top || 1;
    items.forEach(function (it, i) {
      var y = i * row, w = Math.max(2, (width - lw - 60) * it[1] / top);
      out.push('<g class="bar" data-label="' + esc(it[0]) + '" data-value="' + it[1] + '"><text x="' + (lw - 6) + '" y="' +
        (y + 15) + '" text-anchor="end" font-size="12">' + esc(it[0]) + '</text><rect x="' + lw + '" y="' + (y + 4) +
        '" width="' + w.toFixed(1) + '" height="14" fill="#d92d20"/><text x="' + (lw + w + 4).toFixed(1) + '" y="' + (y + 15) +
        '" font-size="12">' + esc(it[1] + unit) + '</text></g>');
    });
    return '<div class="chart" id="' + id + '"><h4>' + esc(title) + '</h4><svg role="img" aria-label="' + esc(title) +
      '" viewBox="0 0 ' + width + ' ' + (row * items.length + 4) + '" preserveAspectRatio="xMinYMin meet">' + out.join('') + '</svg></div>';
  }
  function who(f) {
    var t = f.team || 'no owner known';
    if (f.owner && f.owner !== f.team) t += ' · ' + f.owner;
    if (f.codeowners && f.codeowners.length && f.codeowners.join(' ') !== f.team) t += ' · CODEOWNERS ' + f.codeowners.join(' ');
    return t;
  }
  function doc(rule) {
    var d = R[rule];
    if (!d) return '';
    var parts = [['What it does', d.what], ['Why is this bad?', d.why]];
    var h = '<details class="doc"><summary>' + esc(rule + ' ' + d.name) + ': full rule docs</summary>';
    if (d.summary) h += '<p><b>' + esc(d.summary) + '</b></p>';
    parts.forEach(function (p) { if (p[1]) h += '<h5>' + p[0] + '</h5><p>' + esc(p[1]) + '</p>'; });
    if (d.example) h += '<h5>Example</h5><pre>' + esc(d.example) + '</pre>';
    if (d.instead) h += '<h5>Use instead</h5><pre>' + esc(d.instead) + '</pre>';
    if (d.references && d.references.length) h += '<h5>References</h5><p>' + d.references.map(esc).join('\n') + '</p>';
    return h + '<p class="meta">default severity ' + esc(d.severity) + ' · scope ' + esc(d.scope) + '</p></details>';
  }
  function finding(f) {
    var d = R[f.rule] || {};
    var h = '<article class="finding ' + f.severity + (f.suppressed ? ' suppressed' : '') + '" data-fp="' + f.fingerprint +
      '" data-rule="' + esc(f.rule) + '"><div class="head"><span class="badge ' + f.severity + '">' + f.severity + '</span>' +
      (f['new'] ? '<span class="badge new">new</span>' : '') +
      (f.suppressed ? '<span class="badge supp">suppressed: ' + esc(f.suppressed) + '</span>' : '') +
      '<b class="rule">' + esc(f.rule) + '</b><span class="rname">' + esc(d.name || '') + '</span>' +
      '<span class="who">owners: ' + esc(who(f)) + '</span></div><p class="msg">' + esc(f.message) + '</p>';
    if (f.members.length) {
      h += '<ul class="cited">' + f.members.map(function (m) {
        var s = '<code>' + esc(m.repo ? m.repo + ':' : '') + esc(m.path) + ':' + m.line + '</code>';
        if (m.topic != null) s += ' topic <code>' + esc(m.topic) + '</code>';
        if (m.expression != null) s += ' expression <code>' + esc(m.expression) + '</code>';
        else if (m.message) s += ' ' + esc(m.message);
        if (m.model) s += ' ' + esc(m.model);
        if (m.team) s += ' <span class="meta">(' + esc(m.team) + ')</span>';
        return '<li>' + s + '</li>';
      }).join('') + '</ul>';
    }
    if (f.group && f.scope !== 'group') h += '<p class="meta">group <code>' + esc(f.group) + '</code></p>';
    if (d.instead) h += '<div class="instead"><b>Use instead</b><pre>' + esc(d.instead) + '</pre></div>';
    return h + doc(f.rule) + '</article>';
  }
  function group(g, i) {
    var sev = g.worst === 3 ? 'error' : g.worst === 2 ? 'warning' : 'note';
    var h = '<section class="group" data-group="' + esc(g.group) + '" data-repos="' + g.repos_count + '" data-findings="' +
      g.findings + '" id="group-' + g.index + '"><h3 class="sev-' + sev + '">' + esc(g.group) + '</h3><div class="meta">' +
      g.repos_count + ' repo(s): ' + esc(g.repos.join(', ')) + ' · ' + g.consumers + ' consumer(s) · ' + g.errors +
      ' error(s), ' + g.warnings + ' warning(s) · owners: ' + esc(g.owners.join(', ') || 'none known') + '</div>';
    if (g.description || g.loss.length) {
      h += '<div class="figure"><div class="impact"><b>Simulated impact</b> ' + esc(g.description) + '</div>';
      if (g.loss.length) h += bar('Simulated loss per tag (% of messages' + (g.runs ? ', ' + g.runs + ' runs)' : ')'), g.loss, 'loss-' + g.index, '%');
      h += '</div>';
    }
    h += g.items.map(function (k) { return finding(F[k]); }).join('');
    if (g.other.length) {
      h += '<p class="also">Also on single members of this group (see their repository below): ' + g.other.map(function (k) {
        return '<a href="#repo-' + esc(F[k].repo) + '">' + esc(F[k].rule) + ' in ' + esc(F[k].repo) + '</a>';
      }).join(', ') + '</p>';
    }
    h += '<details><summary>Members (' + g.members.length + ')</summary><div class="wrap"><table><thead><tr><th>repo</th><th>team</th>' +
      '<th>env</th><th>service</th><th>client</th><th>model</th><th>topic</th><th>expression</th><th>where</th></tr></thead><tbody>' +
      g.members.map(function (m) {
        return '<tr><td>' + esc(m[0]) + '</td><td>' + esc(m[1]) + '</td><td>' + esc(m[2]) + '</td><td>' + esc(m[3]) + '</td><td>' +
          esc(m[4]) + '</td><td>' + esc(m[5]) + '</td><td><code>' + esc(m[6]) + '</code></td><td>' +
          (m[7] == null ? '<i>unknown</i>' : '<code>' + esc(m[7]) + '</code>') + '</td><td>' + esc(m[8]) + ':' + esc(m[9]) + '</td></tr>';
      }).join('') + '</tbody></table></div></details>';
    return h + '</section>';
  }
  function repo(r) {
    return '<section class="repo" id="repo-' + esc(r.repo) + '" data-repo="' + esc(r.repo) + '"><h3>' + esc(r.repo || '(outside any repository)') +
      '</h3><div class="meta">owners: ' + esc(r.owners.join(', ') || 'none known') + ' · ' + r.items.length + ' finding(s)</div>' +
      r.items.map(function (k) { return finding(F[k]); }).join('') + '</section>';
  }
  function hay(x) {
    if (x._hay == null) {
      var parts = [x.group || '', x.repo || ''].concat(x.repos || [], x.owners || [], x.topics || []);
      x.items.concat(x.other || []).forEach(function (k) {
        var f = F[k], d = R[f.rule] || {};
        parts.push(f.rule, d.name || '', f.message, f.team, f.owner, f.path, f.group, (f.codeowners || []).join(' '));
      });
      x._hay = parts.join('\n').toLowerCase();
    }
    return x._hay;
  }
  function owned(x, o) {
    return x.owners.some(function (n) { return n.toLowerCase() === o; }) ||
      x.items.some(function (k) { var f = F[k]; return [f.team, f.owner].concat(f.codeowners || []).some(function (n) { return (n || '').toLowerCase() === o; }); });
  }
  var OWNERS = {};
  D.owners.forEach(function (o) { OWNERS[o.toLowerCase()] = true; });
  function keep(x) {
    var q = state.q.trim().toLowerCase();
    if (state.owner && !owned(x, state.owner)) return false;
    if (state.onlyNew && !x.items.some(function (k) { return F[k]['new']; })) return false;
    if (!q) return true;
    if (OWNERS[q]) return owned(x, q);  // a team or owner typed in full: that owner's cards only
    return q.split(/\s+/).every(function (t) { return hay(x).indexOf(t) >= 0; });
  }
  function pager(id, page, total, key) {
    var n = Math.max(1, Math.ceil(total / PAGE)), el = document.getElementById(id);
    el.innerHTML = n > 1 ? '<button data-k="' + key + '" data-d="-1"' + (page ? '' : ' disabled') + '>Previous</button><span>page ' +
      (page + 1) + ' of ' + n + '</span><button data-k="' + key + '" data-d="1"' + (page + 1 < n ? '' : ' disabled') + '>Next</button>' : '';
  }
  function draw() {
    var gs = D.groups.filter(keep), rs = D.repos.filter(keep);
    state.gpage = Math.min(state.gpage, Math.max(0, Math.ceil(gs.length / PAGE) - 1));
    state.rpage = Math.min(state.rpage, Math.max(0, Math.ceil(rs.length / PAGE) - 1));
    document.getElementById('groups').innerHTML = gs.slice(state.gpage * PAGE, (state.gpage + 1) * PAGE).map(group).join('') ||
      '<p class="meta">No group matches.</p>';
    document.getElementById('repos').innerHTML = rs.slice(state.rpage * PAGE, (state.rpage + 1) * PAGE).map(repo).join('') ||
      '<p class="meta">No repository finding matches.</p>';
    pager('group-pager', state.gpage, gs.length, 'gpage');
    pager('repo-pager', state.rpage, rs.length, 'rpage');
    document.getElementById('shown').textContent = gs.length + ' of ' + D.groups.length + ' groups, ' + rs.length + ' of ' +
      D.repos.length + ' repositories shown';
    var h = [];
    if (state.q) h.push('q=' + encodeURIComponent(state.q));
    if (state.owner) h.push('owner=' + encodeURIComponent(state.owner));
    if (state.onlyNew) h.push('new=1');
    if (history.replaceState) history.replaceState(null, '', h.length ? '#' + h.join('&') : location.pathname + location.search);
  }
  var timer = null, box = document.getElementById('filter'), sel = document.getElementById('owner'), nw = document.getElementById('only-new');
  location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
    var p = kv.split('='), v = decodeURIComponent(p[1] || '');
    if (p[0] === 'q') state.q = box.value = v;
    if (p[0] === 'owner') { state.owner = v.toLowerCase(); sel.value = v; }
    if (p[0] === 'new') state.onlyNew = nw.checked = v === '1';
  });
  box.addEventListener('input', function () {
    clearTimeout(timer);
    timer = setTimeout(function () { state.q = box.value; state.gpage = state.rpage = 0; draw(); }, 120);
  });
  sel.addEventListener('change', function () { state.owner = sel.value.toLowerCase(); state.gpage = state.rpage = 0; draw(); });
  nw.addEventListener('change', function () { state.onlyNew = nw.checked; state.gpage = state.rpage = 0; draw(); });
  document.addEventListener('click', function (e) {
    var b = e.target.closest && e.target.closest('.pager button');
    if (!b) return;
    state[b.getAttribute('data-k')] += +b.getAttribute('data-d');
    draw();
    document.getElementById(b.getAttribute('data-k') === 'gpage' ? 'groups-title' : 'repos-title').scrollIntoView();
  });
  var nl = document.getElementById('new-list');
  if (nl) nl.innerHTML = D.new_first.map(function (k) { return finding(F[k]); }).join('');
  draw();
})();
"""


def _script() -> str:
    """The page's script, told the packed data's columns (`pack`)."""
    script = JS
    for key, value in (
        ("interned", dict.fromkeys(sorted(_INTERNED), True)),
        ("finding_cols", FINDING_COLS),
        ("member_cols", MEMBER_COLS),
        ("group_cols", GROUP_COLS),
    ):
        script = script.replace(f"%({key})s", json.dumps(value))
    return script


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def bar_chart(
    title: str, items: Sequence[tuple[str, float]], chart_id: str, unit: str = "", colour: str = "#2e90fa"
) -> str:
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
            f'height="14" fill="{colour}"/><text x="{label_w + w + 4:.1f}" y="{y + 15}" font-size="12">{esc(shown)}</text></g>'
        )
    height = row * len(items) + 4
    return (
        f'<div class="chart" id="{chart_id}"><h3>{esc(title)}</h3><svg role="img" aria-label="{esc(title)}" '
        f'viewBox="0 0 {width} {height}" preserveAspectRatio="xMinYMin meet">{"".join(bars)}</svg></div>'
    )


def trend_chart(history: Sequence[Mapping[str, Any]], chart_id: str = "chart-trend") -> str:
    """Active findings and errors per retained run, oldest left (an SVG line chart)."""
    points = [h for h in history if isinstance(h.get("active"), int)]
    title = "Findings per audit run (active; errors in red)"
    if len(points) < 2:
        return f'<div class="chart" id="{chart_id}"><h3>{esc(title)}</h3><p>one run so far: the trend starts with the next one</p></div>'
    width, height, pad = 420, 150, 30
    top = max(max(int(p["active"]) for p in points), 1)
    step = (width - 2 * pad) / (len(points) - 1)

    def line(key: str, colour: str) -> str:
        xy = [
            (pad + i * step, height - pad - (height - 2 * pad) * int(p.get(key) or 0) / top)
            for i, p in enumerate(points)
        ]
        dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>' for x, y in xy)
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
        return f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{path}"/>{dots}'

    first, last = str(points[0].get("written", ""))[:10], str(points[-1].get("written", ""))[:10]
    labels = (
        f'<text x="{pad}" y="{height - 8}" font-size="13">{esc(first)}</text>'
        f'<text x="{width - pad}" y="{height - 8}" font-size="13" text-anchor="end">{esc(last)}</text>'
        f'<text x="2" y="{pad + 4}" font-size="13">{top}</text><text x="2" y="{height - pad}" font-size="13">0</text>'
    )
    data = esc(json.dumps([[p.get("written", ""), p["active"], p.get("error", 0)] for p in points]))
    return (
        f'<div class="chart" id="{chart_id}" data-points="{data}"><h3>{esc(title)}</h3><svg role="img" aria-label="{esc(title)}" '
        f'viewBox="0 0 {width} {height}">{line("active", "#2e90fa")}{line("error", "#d92d20")}{labels}</svg></div>'
    )


def _card(label: str, value: Any, card_id: str) -> str:
    return f'<div class="card"><b id="{card_id}">{esc(value)}</b><span>{esc(label)}</span></div>'


def loss_items(impact: Mapping[str, Any]) -> list[tuple[str, float]]:
    """Per-tag shares from the group's one prediction (`GroupImpact`): lost, and left in queues nobody pulls."""
    result = impact.get("result") or {}
    items: list[tuple[str, float]] = []
    for key, suffix in (("loss", "lost"), ("stuck", "never pulled")):
        for pair in result.get(key) or ():
            if isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[1], (int, float)) and pair[1] > 0:
                # the figure's number is the one the prediction's description prints (`describe_impact`)
                items.append((f"{pair[0]} ({suffix})", float(_percent(float(pair[1])).rstrip("%").lstrip("<"))))
    return sorted(items, key=lambda kv: -kv[1])


def _impact(value: Any) -> dict[str, Any]:
    if isinstance(value, str) and value:
        try:
            parsed = json.loads(value)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return dict(value) if isinstance(value, Mapping) else {}


def cited(f: Finding) -> tuple[Member, ...]:
    """The members a finding cites: the attached ones (JSON-restored), else its own locations."""
    attached = dict(f.properties).get(MEMBERS)
    if isinstance(attached, (list, tuple)) and attached and all(isinstance(m, Mapping) for m in attached):
        try:
            return tuple(Member.model_validate(m) for m in attached)
        except ValueError:
            pass
    return members_of(f)


def _doc(d: RuleDoc) -> dict[str, Any]:
    return {
        "name": d.name,
        "severity": d.severity.value,
        "scope": d.scope,
        "summary": d.summary,
        "what": d.what,
        "why": d.why,
        "example": d.example,
        "instead": d.instead,
        # offline: references are named as text, never linked or fetched
        "references": [r.split("://", 1)[-1] for r in d.references],
    }


def _finding(row: Mapping[str, Any], new: set[str] | None, owners: Owners) -> dict[str, Any]:
    f = Finding.model_validate_json(row["json"])
    members = []
    for m in cited(f):
        repo = m.location.repo or f.location.repo
        members.append(
            {
                "repo": repo,
                "path": m.location.path,
                "line": m.location.line,
                "message": m.message,
                "topic": m.topic,
                "expression": m.expression,
                "model": m.model,
                "team": owners.of(repo, m.location.path)["team"] if repo else "",
            }
        )
    return {
        "rule": row["rule"],
        "severity": row["severity"],
        "message": row["message"],
        "repo": row["repo"] or "",
        "path": row["path"],
        "line": row["line"],
        "group": row["group"] or "",
        "scope": row["scope"],
        "fingerprint": row["fingerprint"],
        "team": row["team"] or "",
        "owner": row.get("owner") or "",
        "codeowners": list(row.get("codeowners") or []),
        "suppressed": row["suppressed"],
        "impact": f.impact if row["scope"] != GROUP_SCOPE else None,  # a group finding's is its card's one figure
        "new": (row["fingerprint"] in new and not row["suppressed"]) if new is not None else None,
        "members": members,
    }


def _order(f: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        bool(f["suppressed"]),
        not f["new"],
        -SEVERITY_RANK.get(f["severity"], 0),
        f["rule"],
        f["path"] or "",
        f["line"] or 0,
    )


def report_data(
    summary: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    flagged: Sequence[Mapping[str, Any]],
    owners: Owners,
    docs: Mapping[str, RuleDoc],
    history: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """What the page shows, from the audit's records: `rows` are the Parquet findings table's rows
    (rule, severity, message, repo, path, line, group, team, owner, codeowners, fingerprint,
    suppressed, scope, json), `flagged` the groups table's rows with a finding, worst first.

    A group card holds its group-scope findings; every other finding (an expression, a file, a
    deployment, one consumer) is in its repository's section, and the card links to it."""
    changes = summary.get("changes")
    new = set(changes["new_fingerprints"]) if changes else None
    found = sorted((_finding(r, new, owners) for r in rows), key=_order)
    by_group: dict[str, list[int]] = {}
    by_repo: dict[str, list[int]] = {}
    ids = {g["group"] for g in flagged}
    for i, f in enumerate(found):
        if f["scope"] == GROUP_SCOPE and f["group"] in ids:
            by_group.setdefault(f["group"], []).append(i)
        else:
            by_repo.setdefault(f["repo"], []).append(i)
    other: dict[str, list[int]] = {}
    for repo_items in by_repo.values():
        for i in repo_items:
            if found[i]["group"] in ids:
                other.setdefault(found[i]["group"], []).append(i)
    groups: list[dict[str, Any]] = []
    for g in flagged:
        if g["group"] not in by_group:
            continue  # only single-member findings: they are in their repositories' sections
        impact = _impact(g.get("impact"))
        members = g.get("members") or []
        names = sorted({str(m.get("team") or "") for m in members} - {""})
        groups.append(
            {
                "index": len(groups),
                "group": g["group"],
                "worst": g["worst"],
                "errors": g["errors"],
                "warnings": g["warnings"],
                "findings": g["findings"],
                "repos": list(g.get("repos") or []),
                "repos_count": g["repos_count"],
                "consumers": g["consumers"],
                "owners": names,
                "topics": list(g.get("topics") or []),
                "description": impact.get("description") or "",
                "runs": impact.get("runs"),
                "loss": loss_items(impact),
                "members": [
                    [
                        m.get(k)
                        for k in (
                            "repo",
                            "team",
                            "environment",
                            "service",
                            "client",
                            "message_model",
                            "topic",
                            "expression",
                            "path",
                            "line",
                        )
                    ]
                    for m in members
                ],
                "items": by_group[g["group"]],
                "other": other.get(g["group"], []),
            }
        )
    repos: list[dict[str, Any]] = []
    for repo in sorted(
        by_repo, key=lambda r: (-max(SEVERITY_RANK.get(found[i]["severity"], 0) for i in by_repo[r]), r)
    ):
        inv = owners.of(repo, "") if repo else {"team": "", "owner": ""}
        names = sorted({found[i]["team"] for i in by_repo[repo]} | {inv["team"], inv["owner"]} - {""})
        repos.append({"repo": repo, "owners": names, "items": by_repo[repo]})
    everyone = sorted(
        {n for f in found for n in (f["team"], f["owner"], *f["codeowners"]) if n}
        | {m["team"] for f in found for m in f["members"] if m["team"]}
        | {n for g in groups for n in g["owners"]}
    )
    return {
        "rules": {rule: _doc(docs[rule]) for rule in sorted({f["rule"] for f in found}) if rule in docs},
        "findings": found,
        "groups": groups,
        "repos": repos,
        "owners": everyone,
        "new_first": [i for i, f in enumerate(found) if f["new"]],
        "history": list(history),
    }


# --- the page's data, packed: positional rows and one table of the strings that repeat (repos, paths,
# teams, groups, topics...), so 10,000 groups stay a few megabytes; `unpack` (and the page's script) undo it
FINDING_COLS = (
    "rule",
    "severity",
    "message",
    "repo",
    "path",
    "line",
    "group",
    "scope",
    "fingerprint",
    "team",
    "owner",
    "codeowners",
    "suppressed",
    "impact",
    "new",
    "members",
)
MEMBER_COLS = ("repo", "path", "line", "message", "topic", "expression", "model", "team")
GROUP_COLS = (
    "index",
    "group",
    "worst",
    "errors",
    "warnings",
    "findings",
    "repos",
    "repos_count",
    "consumers",
    "owners",
    "topics",
    "description",
    "runs",
    "loss",
    "members",
    "items",
    "other",
)
_INTERNED = frozenset(
    {
        "repo",
        "path",
        "group",
        "team",
        "owner",
        "topic",
        "expression",
        "model",
        "scope",
        "rule",
        "severity",
        "message",
        "description",
    }
)


class _Strings:
    def __init__(self) -> None:
        self.table: list[str | None] = []
        self._index: dict[str | None, int] = {}

    def __call__(self, value: Any) -> int:
        if value not in self._index:
            self._index[value] = len(self.table)
            self.table.append(value)
        return self._index[value]


def pack(data: Mapping[str, Any]) -> dict[str, Any]:
    """`report_data` as the page embeds it (see `unpack`)."""
    s = _Strings()

    def row(obj: Mapping[str, Any], cols: Sequence[str]) -> list[Any]:
        return [s(obj[c]) if c in _INTERNED else obj[c] for c in cols]

    findings = [
        row(
            {
                **f,
                "members": [row(m, MEMBER_COLS) for m in f["members"]],
                "codeowners": [s(o) for o in f["codeowners"]],
            },
            FINDING_COLS,
        )
        for f in data["findings"]
    ]
    groups = [
        row(
            {
                **g,
                "loss": [[s(label), value] for label, value in g["loss"]],
                "repos": [s(r) for r in g["repos"]],
                "owners": [s(o) for o in g["owners"]],
                "topics": [s(t) for t in g["topics"]],
                "members": [[s(v) if isinstance(v, str) or v is None else v for v in m] for m in g["members"]],
            },
            GROUP_COLS,
        )
        for g in data["groups"]
    ]
    rest = {k: v for k, v in data.items() if k not in ("findings", "groups")}
    return {**rest, "findings": findings, "groups": groups, "strings": s.table}


def unpack(packed: Mapping[str, Any]) -> dict[str, Any]:
    """The data `pack` packed, as `report_data` made it (tests read the page with it)."""
    table = packed["strings"]

    def obj(values: Sequence[Any], cols: Sequence[str]) -> dict[str, Any]:
        return {c: table[v] if c in _INTERNED else v for c, v in zip(cols, values)}

    findings = []
    for values in packed["findings"]:
        f = obj(values, FINDING_COLS)
        f["members"] = [obj(m, MEMBER_COLS) for m in f["members"]]
        f["codeowners"] = [table[o] for o in f["codeowners"]]
        findings.append(f)
    groups = []
    for values in packed["groups"]:
        g = obj(values, GROUP_COLS)
        for key in ("repos", "owners", "topics"):
            g[key] = [table[i] for i in g[key]]
        g["members"] = [[table[v] if i not in (9,) else v for i, v in enumerate(m)] for m in g["members"]]
        g["loss"] = [(table[label], value) for label, value in g["loss"]]
        groups.append(g)
    rest = {k: v for k, v in packed.items() if k not in ("findings", "groups", "strings")}
    return {**rest, "findings": findings, "groups": groups}


def when(iso: str) -> str:
    """An ISO 8601 UTC time as people read it: `2026-11-25 14:00 UTC`."""
    if len(iso) >= 16 and iso[10] == "T":
        return f"{iso[:10]} {iso[11:16]}" + (" UTC" if iso.endswith(("+00:00", "Z")) else "")
    return iso


def _changes(summary: Mapping[str, Any], data: Mapping[str, Any]) -> str:
    ch = summary.get("changes")
    trend = trend_chart(data.get("history") or [])
    if not ch:
        return (
            '<p class="meta" id="changes">Not compared with a previous audit: run the next one with '
            "<code>--compare</code> and this output to see new, fixed and unchanged findings.</p>"
            + (f'<div class="charts">{trend}</div>' if len(data.get("history") or []) > 1 else "")
        )
    since = when(str(ch["previous"].get("written") or "")) or str(ch["previous"].get("out"))
    errors = ch["new_by_severity"]["error"]
    head = (
        f"{errors} new error{'s' if errors != 1 else ''} since {esc(since)}"
        if errors
        else f"No new errors since {esc(since)}"
    )
    cards = "".join(
        (
            _card("new", ch["new"], "n-new"),
            _card("fixed", ch["fixed"], "n-fixed"),
            _card("unchanged", ch["unchanged"], "n-unchanged"),
        )
    )

    def table(key: str, title: str) -> str:
        moved = [r for r in ch[f"by_{key}"] if r["new"] or r["fixed"]]  # what changed; the rest in one line
        rows = "".join(
            f"<tr><td>{esc(r[key])}</td><td>{r['new']}</td><td>{r['fixed']}</td><td>{r['unchanged']}</td></tr>"
            for r in moved
        )
        still = len(ch[f"by_{key}"]) - len(moved)
        rest = f'<p class="meta">{still} other {key}{"s" if still != 1 else ""}: no change</p>' if still else ""
        body = (
            f'<div class="wrap"><table><thead><tr><th>{key}</th><th>new</th><th>fixed</th><th>unchanged</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></div>"
            if moved
            else "<p>no change</p>"
        )
        return f'<div class="chart" id="changes-{key}"><h3>{title}</h3>{body}{rest}</div>'

    fixed = "".join(
        f'<li><span class="badge {esc(f["severity"])}">{esc(f["severity"])}</span> <b>{esc(f["rule"])}</b> '
        f"<code>{esc(f['repo'])}:{esc(f['path'])}:{esc(f['line'])}</code> {esc(f['message'])}</li>"
        for f in ch["fixed_findings"]
    )
    fixed_html = (
        f'<details id="fixed-list"><summary>Fixed since then ({ch["fixed"]})</summary><ul>{fixed}</ul></details>'
        if fixed
        else ""
    )
    new_html = f'<h3>New since then ({ch["new"]})</h3><div id="new-list"></div>' if ch["new"] else ""
    return (
        f'<section id="changes"><p class="headline {"bad" if errors else "good"}" id="headline">{head}</p>'
        f'<p class="meta">compared by fingerprint with {esc(ch["previous"]["out"])}</p><div class="cards">{cards}</div>'
        f'<div class="changes-grid">{table("team", "By team")}{table("repo", "By repository")}{table("rule", "By rule")}'
        f'</div><div class="trend">{trend}</div>{new_html}{fixed_html}</section>'
    )


def render(summary: Mapping[str, Any], data: Mapping[str, Any] | None = None) -> str:
    """The whole page. The summary is embedded as JSON (`#summary-data`), the page's data as `#report-data`."""
    data = (
        data
        if data is not None
        else {"rules": {}, "findings": [], "groups": [], "repos": [], "owners": [], "new_first": []}
    )
    t, f, fnd = summary["totals"], summary["files"], summary["findings"]
    sev = fnd["by_severity"]
    cards = "".join(
        (
            _card("repositories", t["repos"], "n-repos"),
            _card("files", f["total"], "n-files"),
            _card("parsed / skipped / failed", f"{f['parsed']} / {f['skipped']} / {f['failed']}", "n-file-status"),
            _card("consumers", t["consumers"], "n-consumers"),
            _card("groups", t["groups"], "n-groups"),
            _card("groups across repos", t["cross_repo_groups"], "n-cross"),
            _card("findings", fnd["active"], "n-findings"),
            _card("errors", sev["error"], "n-errors"),
            _card("warnings", sev["warning"], "n-warnings"),
        )
    )
    warn = ""
    if summary["missing_repos"] or summary["problems"] or f["failed"]:
        items = [f"missing repository <b>{esc(m['repo'])}</b>: {esc(m['uri'])}" for m in summary["missing_repos"]]
        items += [
            f'repository <b><a href="#repo-{esc(r["repo"])}">{esc(r["repo"])}</a></b>: {esc(r["count"])} file(s) failed'
            for r in f["failed_by_repo"]
        ]
        items += [esc(p) for p in summary["problems"]]
        warn = '<div class="warn" id="problems"><ul>' + "".join(f"<li>{i}</li>" for i in items) + "</ul></div>"
    charts = "".join(
        (
            bar_chart("Findings by rule", [(r["rule"], r["count"]) for r in fnd["by_rule"]], "chart-rules"),
            bar_chart("Findings by team", [(r["team"], r["count"]) for r in fnd["by_team"]], "chart-teams"),
            bar_chart(
                "Groups by number of repos",
                [(f"{g['repos']} repo(s)", g["groups"]) for g in summary["group_sizes"]],
                "chart-sizes",
            ),
        )
    )
    options = "".join(f'<option value="{esc(o)}">{esc(o)}</option>' for o in data["owners"])
    toolbar = (
        '<div class="toolbar"><input id="filter" type="search" placeholder="filter: rule id, message, team, owner, repo, group..." '
        f'aria-label="filter findings"><select id="owner" aria-label="owner"><option value="">every owner</option>{options}</select>'
        '<label><input type="checkbox" id="only-new"> new only</label><span id="shown"></span></div>'
    )
    written = when(str(summary.get("written") or ""))
    payload = json.dumps(pack(data), separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")
    summary_json = json.dumps(summary, sort_keys=True, separators=(",", ":")).replace("</", "<\\/")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>subguard audit</title>"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<style>{CSS}</style></head><body><header><h1>subguard audit</h1><p>{esc(', '.join(summary['sources']))}"
        f"{' &middot; ' + esc(written) if written else ''} &middot; {esc(summary['seconds'])} s</p></header><main>"
        f'{_changes(summary, data)}<div class="cards">{cards}</div>{warn}<div class="charts">{charts}</div>'
        f'<h2 id="findings-title">Findings</h2>{toolbar}'
        f'<h2 id="groups-title">Groups, worst first</h2><div id="groups"></div><nav class="pager" id="group-pager"></nav>'
        f'<h2 id="repos-title">Findings outside groups, by repository</h2><p class="meta">Expressions, files, deployments and '
        f'single consumers: each is fixed in one repository.</p><div id="repos"></div><nav class="pager" id="repo-pager"></nav>'
        f'<script type="application/json" id="report-data">{payload}</script>'
        f'<script type="application/json" id="summary-data">{summary_json}</script>'
        f"<script>{_script()}</script></main></body></html>\n"
    )
