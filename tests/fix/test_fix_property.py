"""Property: on generated files, `--fix` changes only the characters of the expressions it fixes, the
fixed files parse, and a new scan finds the group consistent with every other field unchanged."""

from __future__ import annotations

import difflib
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subguard.core.config import load_config
from subguard.core.inventory import subscription_rows
from subguard.fix import run as fixing
from subguard.rules.judge import RuleSet, judge
from subguard.rules.policy import load_policies
from subguard.scan.extraction import ScanResult, scan_repo

TAGS = ("TagA", "TagB", "TagC")
POLICIES = load_policies()


@st.composite
def expressions(draw: st.DrawFn) -> str:
    order = draw(st.permutations(TAGS))
    seps = [draw(st.sampled_from(["||", " ||", "|| ", " || "])) for _ in order[1:]]
    return order[0] + "".join(s + t for s, t in zip(seps, order[1:], strict=True))


def _python(expr: str, quote: str, comment: bool, constant: bool) -> str:
    lit = f"{quote}{expr}{quote}"
    head = "from rocketmq.client import PushConsumer\n" + (f"TAGS = {lit}  # tags\n" if constant else "")
    arg = "TAGS" if constant else lit
    note = "  # keep me\n" if comment else "\n"
    return (
        f'{head}\n\ndef h(m):\n    return None\n\n\nc = PushConsumer("g")\nc.subscribe("T", h, expression={arg}){note}'
    )


def _java(expr: str) -> str:
    return (
        "package d;\n\nimport org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;\n\npublic class C {\n"
        '    void s() throws Exception {\n        DefaultMQPushConsumer c = new DefaultMQPushConsumer("g");\n'
        f'        c.subscribe("T", "{expr}"); // the tags\n    }}\n}}\n'
    )


def _yaml(expr: str, quote: str) -> str:
    q = quote if quote else ""
    return f"# c\nrocketmq:\n  name-server: n:9876\n  pull-consumer:\n    group: g\n    topic: T\n    selector-expression: {q}{expr}{q}  # x\n"


def _scan(root: Path) -> tuple[list[ScanResult], list[object]]:
    config = load_config(None, root)
    results = [scan_repo(root, config)]
    return results, judge(results, RuleSet.of(POLICIES), config).findings


def _rows(results: list[ScanResult]) -> list[dict[str, object]]:
    rows = subscription_rows([c for r in results for c in r.consumers])
    return sorted(({k: v for k, v in row.items() if k not in ("expression", "tags")} for row in rows), key=repr)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    exprs=st.lists(expressions(), min_size=4, max_size=4),
    quotes=st.tuples(st.sampled_from(["'", '"']), st.sampled_from(["", "'", '"'])),
    comment=st.booleans(),
    constant=st.booleans(),
)
def test_fix_changes_only_expression_tokens(
    exprs: list[str], quotes: tuple[str, str], comment: bool, constant: bool
) -> None:
    files = {
        "p1.py": _python(exprs[0], quotes[0], comment, constant),
        "p2.py": _python(exprs[1], quotes[0], not comment, False),
        "src/main/java/d/C.java": _java(exprs[2]),
        "src/main/resources/application.yml": _yaml(exprs[3], quotes[1]),
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        results, findings = _scan(root)
        before_rows = _rows(results)
        run = fixing.fix(results, findings, load_config(None, root), unsafe=False, apply=True)  # type: ignore[arg-type]
        assert not run.outcome.skipped and not run.moved
        again, findings = _scan(root)
        assert not [f for f in findings if f.rule in ("SG103", "SG901")]  # type: ignore[attr-defined]
        assert len({s.expression.value for r in again for c in r.consumers for s in c.subscriptions}) == 1
        assert _rows(again) == before_rows
        for rel, text in files.items():
            new = (root / rel).read_text(encoding="utf-8")
            for line in difflib.ndiff(text.splitlines(), new.splitlines()):
                if line[:1] in "+-":
                    assert any(t in line for t in TAGS), (rel, line)  # only lines holding an expression
            old_lines, new_lines = text.splitlines(), new.splitlines()
            assert len(old_lines) == len(new_lines)
            for a, b in zip(old_lines, new_lines, strict=True):
                if a != b:  # the same line but the expression: what is outside the first/last tag is kept
                    start = min(a.index(t) for t in TAGS)
                    end = max(a.index(t) + len(t) for t in TAGS)
                    start_b = min(b.index(t) for t in TAGS)
                    end_b = max(b.index(t) + len(t) for t in TAGS)
                    assert a[:start] == b[:start_b] and a[end:] == b[end_b:], (a, b)
