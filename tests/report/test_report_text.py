from __future__ import annotations

from report_helpers import DOCS, at_root, context, flat_finding, seed002_finding, suppressed_finding

from subguard.core.model import Finding, Location, Related, Severity
from subguard.report import FORMATS, get_renderer, render, summary_line, use_color
from subguard.report.text import render as text


def test_registry_names_every_format_and_each_loads() -> None:
    assert set(FORMATS) == {"text", "json", "sarif", "github", "markdown", "junit", "gitlab"}
    for name in FORMATS:
        assert callable(get_renderer(name))


def test_group_members_side_by_side_with_aligned_expressions() -> None:
    out = text([seed002_finding(), flat_finding()], DOCS, context())
    lines = out.splitlines()
    assert lines[0] == "group test-consumer"
    assert "SG102 [error] group test-consumer subscribes TopicTest2" in lines[1]
    row1 = next(line for line in lines if "app/consumer1.py:7" in line)
    row2 = next(line for line in lines if "app/consumer2.py:9" in line)
    assert '"tag1"' in row1 and '"tag2 || tag3"' in row2
    # aligned: the topic and expression columns start at the same offset on both rows
    assert row1.index("TopicTest2") == row2.index("TopicTest2")
    assert row1.index('"tag1"') == row2.index('"tag2 || tag3"')


def test_non_group_findings_use_path_line_col_id_message() -> None:
    out = text([flat_finding()], DOCS, context())
    assert "_root/app/bad.py:3:30: SG401 tag expression 'a,b' uses ','" in out


def test_paths_are_relative_to_the_workdir() -> None:
    ctx = context()
    out = text([flat_finding()], DOCS, at_root(ctx))
    assert out.startswith("app/bad.py:3:30: SG401")


def test_summary_counts_by_severity_suppressed_and_files() -> None:
    findings = [seed002_finding(), flat_finding(), suppressed_finding()]
    last = text(findings, DOCS, context()).splitlines()[-1]
    assert (
        last == "2 findings (1 error, 1 warning, 0 note), 1 suppressed; 5 files scanned (3 parsed, 2 skipped, 0 failed)"
    )
    assert "waived one" not in text(findings, DOCS, context())


def test_empty_report_still_has_a_summary_with_zero_files() -> None:
    out = text([], DOCS, context(parsed=0, skipped=0))
    assert out == "0 findings (0 error, 0 warning, 0 note); 0 files scanned (0 parsed, 0 skipped, 0 failed)\n"


def test_colour_only_when_asked_and_alignment_survives() -> None:
    plain = text([seed002_finding()], DOCS, context())
    coloured = text([seed002_finding()], DOCS, context(color=True))
    assert "\x1b[" not in plain and "\x1b[" in coloured
    assert "\x1b[31m" in coloured  # error in red


def test_use_color_honours_tty_and_no_color() -> None:
    assert use_color(True, {}) is True
    assert use_color(False, {}) is False
    assert use_color(True, {"NO_COLOR": "1"}) is False
    assert use_color(True, {"NO_COLOR": ""}) is True  # no-color.org: only a non-empty value disables


def test_group_finding_without_attached_members_falls_back_to_related_messages() -> None:
    f = Finding(
        rule="SG105",
        severity=Severity.ERROR,
        message="mixed message models",
        group="g",
        location=Location(path="a.py", line=2, repo="shop"),
        related=(Related(location=Location(path="b.py", line=4, repo="shop"), message="BROADCASTING"),),
    )
    out = text([f], {}, context())
    assert "_root/b.py:4  BROADCASTING" in out
    assert summary_line([f], context()).startswith("1 finding (1 error")


def test_impact_is_shown_under_the_group() -> None:
    out = render("text", [seed002_finding(impact="tag1 messages: 10 of 10 lost")], DOCS, context())
    assert "impact: tag1 messages: 10 of 10 lost" in out
