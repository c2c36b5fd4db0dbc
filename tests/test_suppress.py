"""Inline waivers, config waivers and baselines as pure functions."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from subguard.core.config import Waiver
from subguard.core.model import Finding, Location, Related, RuleDoc, Severity, Suppression
from subguard.rules import baseline
from subguard.rules.suppress import (
    apply_config,
    apply_inline,
    locate_config_waivers,
    parse_inline,
    problem_findings,
)

KNOWN = {"SG102", "SG103", "SG401", "SG903"}.__contains__


def everything(rule: str) -> bool:
    return True


def finding(
    rule: str = "SG102", path: str = "a.py", line: int = 5, related: tuple[tuple[str, int], ...] = (), **kw: object
) -> Finding:
    return Finding(
        rule=rule,
        severity=Severity.ERROR,
        message="m",
        location=Location(path=path, line=line, repo="r"),
        related=tuple(Related(location=Location(path=p, line=n, repo="r")) for p, n in related),
        group=str(kw.get("group", "g")),
        topic=str(kw.get("topic", "T")),
        fingerprint=f"{rule}-{path}",
    )


# --- parsing ----------------------------------------------------------------------------------------


def test_trailing_comment_covers_its_line_only() -> None:
    src = 'c.subscribe("T", cb, "tag1")  # subguard: ignore[SG102] migrating in PR 42\nnext_line()\n'
    (w,) = parse_inline("a.py", src, "r")
    assert w.rules == ("SG102",) and w.reason == "migrating in PR 42" and w.covers == (1,)
    assert (w.location.line, w.location.column, w.location.repo) == (1, 31, "r")


def test_comment_alone_covers_the_next_line_and_waivers_stack() -> None:
    src = "# subguard: ignore[SG102, sg103] legacy\n# subguard: ignore[SG401]: known\nc.subscribe()\n"
    first, second = parse_inline("a.py", src)
    assert first.rules == ("SG102", "SG103") and first.covers == (1, 3)
    assert second.rules == ("SG401",) and second.reason == "known" and second.covers == (2, 3)


def test_waiver_after_another_directive_and_hash_in_reason() -> None:
    (w,) = parse_inline("a.py", "x = 1  # noqa: E501  # subguard: ignore[SG102] see #123\n")
    assert w.rules == ("SG102",) and w.reason == "see #123"


def test_python_strings_are_not_comments() -> None:
    assert parse_inline("a.py", 'x = "# subguard: ignore[SG102] nope"\n') == []


def test_java_uses_slashes_and_yaml_hash() -> None:
    java = 'consumer.subscribe("T", "a"); // subguard: ignore[SG102] because\nString u = "http://x"; # subguard: ignore[SG103] no\n'
    (w,) = parse_inline("src/C.java", java)
    assert w.rules == ("SG102",) and w.covers == (1,)
    yaml = "a: b # subguard: ignore[SG102] ok\nc: d#subguard: ignore[SG103] not a comment\n"
    (y,) = parse_inline("app.yaml", yaml)
    assert y.rules == ("SG102",)


def test_properties_have_only_whole_line_comments() -> None:
    props = "a=b # subguard: ignore[SG102] part of the value\n! subguard: ignore[SG103] bang comment\nx=y\n"
    (w,) = parse_inline("app.properties", props)
    assert w.rules == ("SG103",) and w.covers == (2, 3)


def test_unparseable_python_falls_back_to_line_scan() -> None:
    (w,) = parse_inline("a.py", "def (:\n  x  # subguard: ignore[SG102] still found\n")
    assert w.covers == (2,)


# --- inline application -----------------------------------------------------------------------------


def run_inline(
    findings: list[Finding], src: str, enabled: Callable[[str], bool] = everything
) -> tuple[list[Finding], list[str]]:
    out, problems = apply_inline(findings, parse_inline("a.py", src, "r"), known=KNOWN, enabled=enabled)
    return out, [p.message for p in problems]


def test_inline_on_the_line_and_above_suppresses_with_reason() -> None:
    src = "\n" * 3 + "# subguard: ignore[SG102] reviewed\nline5  # subguard: ignore[SG401] also\n"
    out, problems = run_inline([finding(line=5), finding("SG401", line=5)], src)
    assert [f.suppressed.kind if f.suppressed else None for f in out] == ["inline", "inline"]
    assert out[0].suppressed == Suppression(
        kind="inline", reason="reviewed", location=Location(path="a.py", line=4, column=1, repo="r")
    )
    assert problems == []


def test_inline_does_not_reach_two_lines_down_or_other_rules_or_files() -> None:
    src = "# subguard: ignore[SG102] reviewed\n\nline3\n"
    findings = [finding(line=3), finding("SG103", line=2), finding(path="b.py", line=2)]
    out, problems = run_inline(findings, src)
    assert all(f.suppressed is None for f in out)
    assert problems == ["unused waiver: no SG102 finding on this line or the next"]


def test_inline_matches_a_related_location_of_a_group_finding() -> None:
    src = "\n" * 8 + "x  # subguard: ignore[SG102] team B migrates next sprint\n"
    out, _ = run_inline([finding(path="a.py", line=1, related=(("b.py", 3), ("a.py", 9)))], src)
    assert out[0].suppressed is not None and out[0].suppressed.reason == "team B migrates next sprint"


def test_every_waiver_covering_one_group_finding_is_used() -> None:
    """Two teams each waive their own member of one group finding: neither waiver is unused."""
    src = "x  # subguard: ignore[SG102] team A: MAIL-88\n\ny  # subguard: ignore[SG102] team B: MAIL-91\n"
    out, problems = run_inline([finding(path="a.py", line=1, related=(("a.py", 3),))], src)
    assert out[0].suppressed is not None and out[0].suppressed.reason == "team A: MAIL-88"
    assert problems == []


def test_waiver_without_reason_does_not_apply_and_is_reported() -> None:
    out, problems = run_inline([finding(line=1)], "x  # subguard: ignore[SG102]\n")
    assert out[0].suppressed is None
    assert problems == ["waiver for SG102 has no reason, so it does not apply: add why after `]`"]


def test_blanket_and_unknown_rule_waivers_are_reported() -> None:
    out, problems = run_inline([finding(line=1)], "x  # subguard: ignore because\ny  # subguard: ignore[SG777] why\n")
    assert out[0].suppressed is None
    assert problems[0].startswith("waiver names no rule") and problems[1] == "waiver names unknown rule SG777"


def test_forbidden_inline_waiver_is_ignored_and_reported_as_warning() -> None:
    waivers = parse_inline("a.py", "x  # subguard: ignore[SG102] please\n", "r")
    out, problems = apply_inline([finding(line=1)], waivers, known=KNOWN, enabled=everything, forbidden=("SG1",))
    assert out[0].suppressed is None
    assert problems[0].severity is Severity.WARNING and "no-inline-waivers" in problems[0].message


def test_unused_waiver_for_a_rule_that_did_not_run_is_not_reported() -> None:
    _, problems = run_inline([], "x  # subguard: ignore[SG103] fine\n", enabled=lambda r: r != "SG103")
    assert problems == []


def test_problem_findings_take_sg903_severity_and_a_line_free_fingerprint() -> None:
    _, problems = apply_inline(
        [], parse_inline("a.py", "\n\nx  # subguard: ignore[SG102] r\n", "r"), known=KNOWN, enabled=everything
    )
    moved = apply_inline(
        [], parse_inline("a.py", "x  # subguard: ignore[SG102] r\n", "r"), known=KNOWN, enabled=everything
    )[1]
    doc = RuleDoc(id="SG903", name="unused-waiver", severity=Severity.WARNING, scope="tool")
    (f,) = problem_findings(problems, {"SG903": doc})
    assert f.rule == "SG903" and f.severity is Severity.WARNING and f.location.line == 3
    assert f.fingerprint == problem_findings(moved, {})[0].fingerprint
    assert problem_findings(problems, {})[0].severity is Severity.NOTE


# --- config waivers ---------------------------------------------------------------------------------

TODAY = dt.date(2025, 6, 1)


def test_config_waiver_by_group_and_topic() -> None:
    waivers = [
        Waiver(rule="SG102", group="g", topic="T", reason="ticket 7"),
        Waiver(rule="SG102", group="g", topic="U", reason="x"),
    ]
    locs = [Location(path=".subguard.yaml", line=3), Location(path=".subguard.yaml", line=7)]
    out, problems = apply_config([finding(), finding(group="other")], waivers, locs, today=TODAY, enabled=everything)
    assert out[0].suppressed == Suppression(kind="config", reason="ticket 7", location=locs[0])
    assert out[1].suppressed is None
    assert [(p.message, p.location.line) for p in problems] == [
        ("unused config waiver for SG102 group g topic U: it matched no finding", 7)
    ]


def test_expired_config_waiver_is_not_applied_and_warns() -> None:
    waivers = [Waiver(rule="SG102", group="g", reason="until June", expires=dt.date(2025, 5, 31))]
    out, problems = apply_config([finding()], waivers, [Location(path="c.yaml")], today=TODAY, enabled=everything)
    assert out[0].suppressed is None
    assert problems[0].severity is Severity.WARNING and "expired on 2025-05-31" in problems[0].message
    still = [Waiver(rule="SG102", group="g", reason="until June", expires=TODAY)]
    assert (
        apply_config([finding()], still, [Location(path="c.yaml")], today=TODAY, enabled=everything)[0][0].suppressed
        is not None
    )


def test_locate_config_waivers_finds_the_nth_mention_of_each_group() -> None:
    text = "waivers:\n  - rule: SG102\n    group: orders\n  - rule: SG103\n    group: orders-v2\n  - rule: SG105\n    group: orders\n"
    waivers = [
        Waiver(rule=r, group=g, reason="x")
        for r, g in (("SG102", "orders"), ("SG103", "orders-v2"), ("SG105", "orders"))
    ]
    assert [loc.line for loc in locate_config_waivers(waivers, ".subguard.yaml", text)] == [3, 5, 7]


# --- baseline ---------------------------------------------------------------------------------------


def test_baseline_round_trip_and_stale_count() -> None:
    findings = [finding(), finding("SG401", path="b.py")]
    text = baseline.dumps(findings)
    fps = baseline.loads(text, "b.json")
    assert fps == {"SG102-a.py", "SG401-b.py"}
    out, stale = baseline.apply([finding(line=99)], fps)  # moved: still baselined
    assert out[0].suppressed == Suppression(kind="baseline", reason="in baseline") and stale == 1


def test_baseline_rejects_other_files() -> None:
    for text in ("not json", "[]", '{"tool": "subguard", "version": 9, "findings": {}}'):
        with pytest.raises(baseline.BaselineError, match="^b.json: "):
            baseline.loads(text, "b.json")


def test_with_fingerprint_is_line_free() -> None:
    a = baseline.with_fingerprint(finding().model_copy(update={"fingerprint": ""}))
    b = baseline.with_fingerprint(finding(line=40).model_copy(update={"fingerprint": ""}))
    assert a.fingerprint and a.fingerprint == b.fingerprint


# --- properties -------------------------------------------------------------------------------------


@given(text=st.text(), ext=st.sampled_from([".py", ".java", ".yaml", ".properties", ".txt"]))
def test_parse_inline_never_raises_and_covers_sane_lines(text: str, ext: str) -> None:
    for w in parse_inline("f" + ext, "# subguard: ignore[SG102] r\n" + text):
        assert w.location.line >= 1 and all(line >= w.location.line for line in w.covers)


YAML_BINDINGS = """spring:
  cloud:
    stream:
      bindings:
        # subguard: ignore[SG102] old tag set retires in release 42
        input:
          destination: orders  # a trailing comment

          group: GID_ORDERS
        output:
          destination: audit
      rocketmq:
        bindings:
          input:
            consumer:
              # subguard: ignore[SG103] scalar key: covers its own line only
              subscription: tagA
queues:
  # subguard: ignore[SG401] a sequence at the key's own indent belongs to it
  consumers:
  - a
  - b
other: 1
---
# subguard: ignore[SG102] a block ends at a document marker
next:
  key: 1
---
last: 2
"""


def test_yaml_waiver_above_a_key_covers_the_block_it_opens() -> None:
    binding, scalar, sequence, document = parse_inline("application.yml", YAML_BINDINGS)
    assert binding.covers == (5, 6, 7, 8, 9)  # `input:` down to `group:`, the blank line inside included
    assert scalar.covers == (16, 17)
    assert sequence.covers == (19, 20, 21, 22)
    assert document.covers == (25, 26, 27)
    assert parse_inline("app.py", "# subguard: ignore[SG102] r\nblock:\n  x = 1\n")[0].covers == (1, 2)  # YAML only
