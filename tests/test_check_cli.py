"""`subguard check` end to end through `subguard.cli.main.main` on real fixture repos."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from subguard.cli.commands.check import guarded
from subguard.cli.main import main
from subguard.rules.policy import load_policies, rule_docs
from tests.report_json import all_findings

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "check"
POLICY_FILE = Path(__file__).resolve().parents[1] / "policies" / "SG102-group-tag-set-mismatch.yaml"
C1 = "app/consumer1.py"
C2 = "app/consumer2.py"
C1_LINE = 14  # consumer.subscribe("TopicTest2", on_message, "tag1")
C2_LINE = 13  # consumer.subscribe("TopicTest2", on_message, expression="tag2")
SG903_SEVERITY = rule_docs(load_policies())["SG903"].severity.value


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the seed 002 fixture in a scratch directory that is also the working directory."""
    dest = tmp_path / "repo"
    shutil.copytree(FIXTURES / "seed002", dest)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return dest


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def edit(path: Path, line: int, new: str) -> None:
    """Replace one line (1-based) of a file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[line - 1] = new
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def sg102(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in findings if f["rule"] == "SG102"]


# --- seed 002 in every format -------------------------------------------------------------------------


def test_seed002_text_names_both_members(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "repo", "--no-simulate")
    assert code == 1
    assert "group test-consumer" in out and "SG102" in out
    assert f"repo/{C1}:{C1_LINE}" in out and f"repo/{C2}:{C2_LINE}" in out
    assert '"tag1"' in out and '"tag2"' in out
    assert out.splitlines()[-1].endswith("; 3 files scanned (2 parsed, 1 skipped, 0 failed)")


def test_seed002_json(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "repo", "--format", "json")
    assert code == 1
    (f,) = sg102(all_findings(out))
    places = {(f["path"], f["line"])} | {(r["path"], r["line"]) for r in f["related"]}
    assert places == {(C1, C1_LINE), (C2, C2_LINE)}
    assert f["group"] == "test-consumer" and f["topic"] == "TopicTest2"
    assert f["suppressed"] is None and len(f["fingerprint"]) >= 16


def test_seed002_sarif_validates(repo: Path, capsys: pytest.CaptureFixture[str], sarif_validator: Any) -> None:
    code, out, _ = run(capsys, "repo", "--format", "sarif")
    assert code == 1
    log = json.loads(out)
    assert not list(sarif_validator.iter_errors(log))
    (result,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "SG102"]
    uris = [result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]]
    uris += [r["physicalLocation"]["artifactLocation"]["uri"] for r in result["relatedLocations"]]
    assert sorted(uris) == [f"repo/{C1}", f"repo/{C2}"]
    assert result["partialFingerprints"]["subguard/v1"]
    rule = log["runs"][0]["tool"]["driver"]["rules"][result["ruleIndex"]]
    assert rule["id"] == "SG102" and rule["help"]["markdown"]


def test_seed002_github(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "repo", "--format", "github")
    assert code == 1
    (line,) = [x for x in out.splitlines() if "SG102" in x]
    assert line.startswith("::error file=repo/app/consumer")
    assert f"repo/{C1}" in line and f"repo/{C2}" in line


def test_markdown_and_output_file(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "summary.md"
    code, out, err = run(capsys, "repo", "--format", "markdown", "--output", str(target))
    assert code == 1 and out == ""
    text = target.read_text(encoding="utf-8")
    assert "### Group `test-consumer`" in text and "`tag1`" in text and "`tag2`" in text
    assert "files scanned" in err


def test_also_writes_several_reports_from_one_scan(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sarif, md = tmp_path / "out.sarif", tmp_path / "sum.md"
    code, out, _ = run(capsys, "repo", "--format", "github", "--also", f"sarif={sarif}", "--also", f"markdown={md}")
    assert code == 1 and out.startswith("::error file=repo/app/")
    assert json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"][0]["ruleId"] == "SG102"
    assert "### Group `test-consumer`" in md.read_text(encoding="utf-8")
    code, _, err = run(capsys, "repo", "--also", "pdf=x.pdf")
    assert code == 2 and "--also expects FORMAT=FILE" in err and err.count("\n") == 1


# --- exit codes ----------------------------------------------------------------------------------------


def write_config(root: Path, body: str) -> None:
    (root / ".subguard.yaml").write_text(body, encoding="utf-8")


def test_fail_on_matrix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """error (SG102), warning (expired config waiver), note (SG902 unresolved group) against each --fail-on."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(FIXTURES / "seed002", tmp_path / "err")
    shutil.copytree(FIXTURES / "clean", tmp_path / "warn")
    write_config(
        tmp_path / "warn",
        "waivers:\n  - rule: SG102\n    group: order-group\n    reason: old\n    expires: 2000-01-01\n",
    )
    shutil.copytree(FIXTURES / "unresolved", tmp_path / "note")
    expected = {
        "err": {"error": 1, "warning": 1, "note": 1, "none": 0},
        "warn": {"error": 0, "warning": 1, "note": 1, "none": 0},
        "note": {"error": 0, "warning": 0, "note": 1, "none": 0},
    }
    for case, by_level in expected.items():
        for level, code in by_level.items():
            assert run(capsys, case, "--fail-on", level)[0] == code, (case, level)


def test_clean_repo_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(FIXTURES)
    code, out, _ = run(capsys, "clean")
    assert code == 0 and out.startswith("0 findings")


def test_select_and_ignore(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "repo", "--select", "SG102")[0] == 1
    assert run(capsys, "repo", "--select", "SG101,SG103")[0] == 0
    assert run(capsys, "repo", "--ignore", "SG102")[0] == 0
    assert run(capsys, "repo", "--select", "SG1", "--ignore", "sg102")[0] == 0


@pytest.mark.parametrize("argv", [("--select", "SG999"), ("--ignore", "SG102,XX1")])
def test_unknown_rule_id_is_a_usage_error(
    repo: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, str]
) -> None:
    code, out, err = run(capsys, "repo", *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "unknown rule id" in err and "Traceback" not in err


def test_malformed_policy_is_a_usage_error(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = tmp_path / "pol"
    extra.mkdir()
    (extra / "ACME001-broken.yaml").write_text("id: ACME001\nname: broken\nseverity: fatal\n", encoding="utf-8")
    code, _, err = run(capsys, "repo", "--policies", str(extra))
    assert code == 2 and err.count("\n") == 1 and "ACME001-broken.yaml" in err


def test_missing_policy_dir_missing_path_and_bad_config(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv, needle in (
        (("repo", "--policies", str(tmp_path / "nope")), "policy directory does not exist"),
        (("repo", "does-not-exist"), "path does not exist: does-not-exist"),
        (("repo", "--policies", str(POLICY_FILE)), "takes a directory of policy files, not a file"),
    ):
        code, _, err = run(capsys, *argv)
        assert code == 2 and needle in err and err.count("\n") == 1, err
    write_config(repo, "fail-on: [not, a, string]\n")
    code, _, err = run(capsys, "repo")
    assert code == 2 and ".subguard.yaml" in err and err.count("\n") == 1
    write_config(repo, "fail-on: sometimes\n")
    code, _, err = run(capsys, "repo")
    assert code == 2 and "fail-on must be one of" in err


@pytest.mark.parametrize(
    "argv",
    [
        ("inventory", "does-not-exist"),
        ("inventory", "--format", "table", "repo", "does-not-exist"),
        ("simulate", "--inventory", "does-not-exist"),
        ("evidence", "does-not-exist.log"),
        ("rules", "--config", "no-such-config.yaml"),
    ],
)
def test_every_command_reports_bad_input_in_one_line(
    repo: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    code = main(list(argv))
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("subguard: error: ") and err.count("\n") == 1, err


def test_internal_error_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    @guarded
    def boom() -> int:
        raise RuntimeError("kaput")

    monkeypatch.delenv("SUBGUARD_DEBUG", raising=False)
    assert boom() == 2
    assert capsys.readouterr().err == "subguard: internal error: RuntimeError: kaput\n"
    monkeypatch.setenv("SUBGUARD_DEBUG", "1")
    assert boom() == 2
    assert "Traceback" in capsys.readouterr().err


def test_empty_scan_is_not_silent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "nothing").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "nothing")
    assert code == 0
    assert "0 files scanned" in out and "no files found under nothing" in err


def test_stats_go_to_stderr(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, err = run(capsys, "repo", "--stats")
    assert "files:" in err and "files:" not in out


# --- waivers -------------------------------------------------------------------------------------------


def test_inline_waiver_on_the_line(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(
        repo / C2,
        C2_LINE,
        '    consumer.subscribe("TopicTest2", on_message, expression="tag2")  # subguard: ignore[SG102] tag2 consumer retires in May',
    )
    code, out, _ = run(capsys, "repo", "--format", "json")
    assert code == 0
    (f,) = sg102(all_findings(out))
    assert f["suppressed"] == {"kind": "inline", "reason": "tag2 consumer retires in May"}
    code, out, _ = run(capsys, "repo")
    assert code == 0 and "1 suppressed" in out


def test_inline_waiver_on_the_line_above(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(repo / C1, C1_LINE - 1, "    # subguard: ignore[SG102] reviewed with the platform team")
    code, out, _ = run(capsys, "repo", "--format", "json")
    assert code == 0 and sg102(all_findings(out))[0]["suppressed"]["kind"] == "inline"


def test_inline_waiver_without_reason_does_not_apply(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(repo / C1, C1_LINE - 1, "    # subguard: ignore[SG102]")
    code, out, _ = run(capsys, "repo", "--format", "json")
    findings = all_findings(out)
    assert code == 1 and sg102(findings)[0]["suppressed"] is None
    (note,) = [f for f in findings if f["rule"] == "SG903"]
    assert (note["path"], note["line"], note["severity"]) == (C1, C1_LINE - 1, SG903_SEVERITY)
    assert "no reason" in note["message"]


def test_unused_inline_waiver_becomes_sg903(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(repo / C1, 7, "    print(msg.tags)  # subguard: ignore[SG102] stale")
    code, out, _ = run(capsys, "repo", "--format", "json", "--fail-on", "note")
    (note,) = [f for f in all_findings(out) if f["rule"] == "SG903"]
    assert code == 1 and (note["path"], note["line"]) == (C1, 7) and "unused" in note["message"]
    assert run(capsys, "repo", "--format", "json", "--ignore", "SG903,SG102")[0] == 0


def test_no_inline_waivers_governance(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_config(repo, "no-inline-waivers: [SG102]\n")
    edit(repo / C1, C1_LINE - 1, "    # subguard: ignore[SG102] please")
    code, out, _ = run(capsys, "repo", "--format", "json")
    findings = all_findings(out)
    assert code == 1 and sg102(findings)[0]["suppressed"] is None
    (warn,) = [f for f in findings if f["rule"] == "SG903"]
    assert warn["severity"] == "warning" and "forbidden" in warn["message"]


def test_config_waiver_applies_and_expires(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    waiver = "waivers:\n  - rule: SG102\n    group: test-consumer\n    topic: TopicTest2\n    reason: JIRA-12\n    expires: {}\n"
    write_config(repo, waiver.format("2999-12-31"))
    code, out, _ = run(capsys, "repo", "--format", "json")
    assert code == 0 and sg102(all_findings(out))[0]["suppressed"] == {"kind": "config", "reason": "JIRA-12"}
    write_config(repo, waiver.format("2001-01-01"))
    code, out, _ = run(capsys, "repo", "--format", "json")
    findings = all_findings(out)
    assert code == 1 and sg102(findings)[0]["suppressed"] is None
    (warn,) = [f for f in findings if f["rule"] == "SG903"]
    assert warn["severity"] == "warning" and "expired on 2001-01-01" in warn["message"]
    assert (warn["path"], warn["line"]) == (".subguard.yaml", 3)


def test_explicit_config_outside_the_root_points_at_the_file(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], sarif_validator: Any
) -> None:
    cfg = tmp_path / "team" / "subguard.yaml"
    cfg.parent.mkdir()
    cfg.write_text("waivers:\n  - rule: SG102\n    group: nobody\n    reason: left over\n", encoding="utf-8")
    code, out, _ = run(capsys, "repo", "--config", str(cfg), "--format", "sarif", "--fail-on", "none")
    log = json.loads(out)
    assert not [r for r in log["runs"][0]["results"] if r["ruleId"] == "SG903"], "a tool finding raises no alert"
    notifications = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    (result,) = [n for n in notifications if n["associatedRule"]["id"] == "SG903"]
    assert code == 0 and "unused config waiver" in result["message"]["text"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": cfg.resolve().as_uri()}
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
    assert not list(sarif_validator.iter_errors(log))


# --- baseline -------------------------------------------------------------------------------------------


def test_baseline_round_trip_survives_moved_lines(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "baseline.json"
    code, _, err = run(capsys, "repo", "--write-baseline", str(base))
    assert code == 0 and "wrote" in err
    data = json.loads(base.read_text(encoding="utf-8"))
    assert any(v["rule"] == "SG102" and v["group"] == "test-consumer" for v in data["findings"].values())
    assert run(capsys, "repo", "--baseline", str(base))[0] == 0
    # move the subscriptions down: fingerprints carry no line numbers
    for path in (repo / C1, repo / C2):
        path.write_text("# moved\n\n\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    code, out, _ = run(capsys, "repo", "--baseline", str(base), "--format", "json")
    (f,) = sg102(all_findings(out))
    assert code == 0 and f["suppressed"]["kind"] == "baseline" and f["line"] in (C1_LINE + 3, C2_LINE + 3)
    # a new inconsistency (another group) is not in the baseline
    for name, tag in (("new1.py", "tag1"), ("new2.py", "tag9")):
        text = (
            (repo / C1)
            .read_text(encoding="utf-8")
            .replace('"test-consumer"', '"new-group"')
            .replace('"tag1"', f'"{tag}"')
        )
        (repo / "app" / name).write_text(text, encoding="utf-8")
    assert run(capsys, "repo", "--baseline", str(base))[0] == 1


def test_config_baseline_and_stale_entries(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "repo", "--write-baseline", str(repo / "sg-baseline.json"))[0] == 0
    write_config(repo, "baseline: sg-baseline.json\n")  # relative to the config file
    code, out, err = run(capsys, "repo")
    assert code == 0 and "1 suppressed" in out and err == ""
    (repo / C2).unlink()  # the inconsistency is fixed: its entry is stale
    code, _, err = run(capsys, "repo")
    assert code == 0 and "1 baseline entry no longer matches a finding" in err


def test_bad_baseline_is_a_usage_error(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "b.json"
    bad.write_text("{}", encoding="utf-8")
    code, _, err = run(capsys, "repo", "--baseline", str(bad))
    assert code == 2 and "not a subguard baseline" in err


# --- simulation ----------------------------------------------------------------------------------------


def test_no_simulate_leaves_impact_empty(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("subguard.simulate.impact", reason="the simulator's describe_group is not there yet")
    _, out, _ = run(capsys, "repo", "--format", "json")
    assert sg102(all_findings(out))[0]["impact"]
    _, out, _ = run(capsys, "repo", "--format", "json", "--no-simulate")
    assert sg102(all_findings(out))[0]["impact"] is None
    write_config(repo, "simulate: false\n")
    _, out, _ = run(capsys, "repo", "--format", "json")
    assert sg102(all_findings(out))[0]["impact"] is None


# --- --show-config ----------------------------------------------------------------------------------


def test_show_config_names_the_origin_of_every_setting(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(repo, 'fail-on: warning\nexclude: ["legacy/**"]\n')
    extra = tmp_path / "team-policies"
    extra.mkdir()
    code, out, _ = run(capsys, "repo", "--show-config", "--select", "SG1", "--policies", str(extra), "--no-simulate")
    assert code == 0
    lines = {line.split(":", 1)[0]: line for line in out.splitlines() if not line.startswith("#")}
    source = str((repo / ".subguard.yaml").resolve())
    assert lines["select"].startswith('select: ["SG1"]') and lines["select"].endswith("# command line")
    assert lines["simulate"].startswith("simulate: false") and lines["simulate"].endswith("# command line")
    assert lines["fail-on"].startswith("fail-on: warning") and lines["fail-on"].endswith(f"# {source}")
    assert lines["exclude"].startswith('exclude: ["legacy/**"]')
    assert lines["jobs"].endswith("# default")
    assert out.startswith("# config file: ") and "# policy folders: " in out and str(extra) in out
    assert "findings" not in out  # nothing was scanned


def test_show_config_without_a_config_file_says_where_it_looked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()  # the walk stops at the work tree's top
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, ".", "--show-config", "--fail-on", "note")
    assert code == 0 and out.startswith("# config file: none (defaults)") and str(tmp_path) in out
    assert "fail-on: note" in out and "# command line" in out


def test_paths_with_different_configs_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One config applies to every path (the first path's nearest); a path whose own would differ is
    named in a warning, by check and by inventory, instead of being judged silently by another's."""
    for name in ("a", "b", "c"):
        shutil.copytree(FIXTURES / "seed002", tmp_path / name)
    (tmp_path / "b" / ".subguard.yaml").write_text("fail-on: error\n", encoding="utf-8")
    a, b, c = (str(tmp_path / n) for n in "abc")
    code, _, err = run(capsys, a, b, "--fail-on", "none", "--no-cache")
    assert code == 0 and f"warning: {b} has its own config {tmp_path / 'b' / '.subguard.yaml'}" in err, err
    assert "first path's (the defaults) applies to every path" in err
    _, _, err = run(capsys, b, a, "--fail-on", "none", "--no-cache")
    assert f"warning: {a} has no config file" in err, err
    assert main(["inventory", a, b, "--no-cache"]) == 0
    assert f"warning: {b} has its own config" in capsys.readouterr().err
    for argv in ((a, c), (b, a, "--config", str(tmp_path / "b" / ".subguard.yaml"))):
        _, _, err = run(capsys, *argv, "--fail-on", "none", "--no-cache")
        assert "warning" not in err, err
