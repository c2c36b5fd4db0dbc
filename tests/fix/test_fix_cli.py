"""`check --fix`, `--diff` and `--unsafe-fixes` on real files: fixed on disk, checked again, and
nothing but the expression tokens changed (issue 21)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest

from subguard.cli.main import main

SCHEMA = Path(__file__).resolve().parents[3] / "shared" / "schemas" / "sarif-schema-2.1.0.json"

# one group, topic TopicB, members in Python (inline and a module constant), Java (inline and a
# constant), YAML (rocketmq-spring pull consumer) and properties (a placeholder's value, and a
# pull consumer whose value continues on the next line); every member writes Tag1 and Tag2
FILES = {
    "a.py": (
        "from rocketmq.client import PushConsumer\n\nTAGS = 'Tag2 || Tag1'  # the tags\n\n\n"
        "def handle(msg):\n    return None\n\n\n"
        'c = PushConsumer("pay-group")\nc.subscribe("TopicB", handle, expression="Tag1||Tag2")  # inline\n'
        'd = PushConsumer("pay-group")\nd.subscribe(\n    "TopicB",\n    handle,\n    expression=TAGS,\n)\n'
    ),
    "src/main/java/demo/Cons.java": (
        "package demo;\n\nimport org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;\n\n"
        'public class Cons {\n    private static final String TAGS = "Tag2||Tag1"; // shared\n\n'
        "    public void start() throws Exception {\n"
        '        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("pay-group");\n'
        '        consumer.subscribe("TopicB", "Tag1 ||Tag2");\n'
        '        DefaultMQPushConsumer c2 = new DefaultMQPushConsumer("pay-group");\n'
        '        c2.subscribe("TopicB", TAGS);\n'
        '        DefaultMQPushConsumer c3 = new DefaultMQPushConsumer("pay-group");\n'
        '        c3.subscribe("TopicB", "Tag2||Tag1");\n'
        "        consumer.start();\n    }\n}\n"
    ),
    "src/main/resources/application.yml": (
        "# config\nrocketmq:\n  name-server: ns:9876\n  pull-consumer:\n    group: pay-group\n"
        "    topic: TopicB\n    selector-expression: 'Tag2|| Tag1'  # kept\n"
    ),
    "svc2/src/main/resources/application.properties": "# svc2\nrocketmq.name-server=ns:9876\npay.tags=Tag2\\u0020||Tag1\n",
    "svc2/src/main/java/demo2/L.java": (
        "package demo2;\n\nimport org.apache.rocketmq.spring.annotation.RocketMQMessageListener;\n"
        "import org.apache.rocketmq.spring.core.RocketMQListener;\n\n"
        '@RocketMQMessageListener(topic = "TopicB", consumerGroup = "pay-group", selectorExpression = "${pay.tags}")\n'
        "public class L implements RocketMQListener<String> {\n    public void onMessage(String m) {}\n}\n"
    ),
    "svc3/src/main/resources/application.properties": (
        "rocketmq.name-server=ns:9876\nrocketmq.pull-consumer.group=pay-group\nrocketmq.pull-consumer.topic=TopicB\n"
        "rocketmq.pull-consumer.selector-expression = Tag2 \\\n   ||Tag1\n"
    ),
}
CANONICAL = (
    "Tag2||Tag1"  # two members write it (Cons.java), as many as 'Tag2 ||Tag1' (svc2, svc3): the first by path wins
)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8", newline="")
    _git(root, "init", "-q")
    _git(root, "config", "user.email", "t@example.com")
    _git(root, "config", "user.name", "t")
    (root / ".gitignore").write_text(".subguard_cache/\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "consumers")
    monkeypatch.chdir(root)
    return root


def _check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", "--no-simulate", "--no-cache", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _rules(capsys: pytest.CaptureFixture[str]) -> list[str]:
    _, out, _ = _check(capsys, ".", "--format", "json")
    return sorted(f["rule"] for f in json.loads(out)["findings"] if not f.get("suppressed"))


def test_fix_makes_the_group_consistent_and_changes_only_expression_tokens(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "SG103" in _rules(capsys)
    before = {rel: (repo / rel).read_text(encoding="utf-8") for rel in FILES}
    code, _, err = _check(capsys, ".", "--fix")
    assert "fixed 1 finding(s)" in err, err
    assert "SG103" not in _rules(capsys)
    after = {rel: (repo / rel).read_text(encoding="utf-8") for rel in FILES}
    # every changed line differs only inside the expression: the old expression's characters replaced
    old_tokens = {
        "'Tag2 || Tag1'": f"'{CANONICAL}'",
        '"Tag1||Tag2"': f'"{CANONICAL}"',
        '"Tag1 ||Tag2"': f'"{CANONICAL}"',
        "'Tag2|| Tag1'": f"'{CANONICAL}'",
        "Tag2\\u0020||Tag1": CANONICAL,
    }
    for rel in FILES:
        expected = before[rel]
        for old, new in old_tokens.items():
            expected = expected.replace(old, new)
        expected = expected.replace("Tag2 \\\n   ||Tag1", CANONICAL)
        assert after[rel] == expected, rel
    assert "# the tags" in after["a.py"] and "# kept" in after["src/main/resources/application.yml"]
    assert "L.java" not in _git(repo, "diff", "--stat")  # the placeholder is fixed where it is defined
    # idempotent: a second --fix changes nothing
    snapshot = _git(repo, "diff")
    code, _, err = _check(capsys, ".", "--fix")
    assert "fixed" not in err and _git(repo, "diff") == snapshot


def test_diff_changes_nothing_and_applies_with_git_apply(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, patch, err = _check(capsys, ".", "--diff")
    assert code == 1 and patch.startswith("--- a/"), err
    assert _git(repo, "status", "--porcelain") == ""  # nothing changed
    (repo.parent / "fix.patch").write_text(patch, encoding="utf-8", newline="")
    _git(repo, "apply", str(repo.parent / "fix.patch"))
    assert "SG103" not in _rules(capsys)
    code, patch, _ = _check(capsys, ".", "--diff")
    assert code == 0 and patch == ""


def test_sarif_carries_the_fixes_and_validates(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _check(capsys, ".", "--format", "sarif")
    log = json.loads(out)
    jsonschema.validate(log, json.loads(SCHEMA.read_text(encoding="utf-8")))
    fixes = [r["fixes"] for r in log["runs"][0]["results"] if r["ruleId"] == "SG103"]
    assert fixes and fixes[0][0]["properties"]["safety"] == "safe"
    changed = {c["artifactLocation"]["uri"] for c in fixes[0][0]["artifactChanges"]}
    assert changed == {
        "a.py",
        "src/main/java/demo/Cons.java",
        "src/main/resources/application.yml",
        "svc2/src/main/resources/application.properties",
        "svc3/src/main/resources/application.properties",
    }


def test_a_constant_used_outside_the_group_is_an_unsafe_fix(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "b.py").write_text("from a import TAGS\n\nprint(TAGS)\n", encoding="utf-8")
    code, _, err = _check(capsys, ".", "--fix")
    assert "fixed" not in err and "1 more fix(es) available with --unsafe-fixes" in err, err
    assert _git(repo, "status", "--porcelain").strip() == "?? b.py"
    code, patch, err = _check(capsys, ".", "--diff", "--unsafe-fixes")
    assert "TAGS = 'Tag2||Tag1'" in patch
    _, out, _ = _check(capsys, ".", "--format", "sarif")
    fix = next(r["fixes"][0] for r in json.loads(out)["runs"][0]["results"] if r["ruleId"] == "SG103")
    assert fix["properties"]["safety"] == "unsafe" and "b.py:3" in fix["description"]["text"]


def test_sg401_safe_and_unsafe_and_sg107(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    src = (
        "from rocketmq.client import PushConsumer\n\n\ndef handle(msg):\n    return None\n\n\n"
        'a = PushConsumer("g-a")\na.subscribe("T1", handle, expression="paid||refunded||")\n'
        'b = PushConsumer("g-b")\nb.subscribe("T2", handle, expression=" * ")\n'
        'c = PushConsumer("g-c")\nc.subscribe("T3", handle, expression="x | y")\n'
        'd = PushConsumer("g-d")\nd.subscribe("T4", handle, expression="created")  # first\n'
        'd.subscribe("T4", handle, expression="paid")\n'
        'e = PushConsumer("g-e")\ne.subscribe("T5", handle, expression="a || *")\n'
    )
    (tmp_path / "w.py").write_text(src, encoding="utf-8")
    _check(capsys, ".", "--fix")
    text = (tmp_path / "w.py").read_text(encoding="utf-8")
    assert 'expression="paid||refunded")' in text  # safe: same tags
    assert (
        'expression=" * "' in text and 'expression="x | y"' in text and 'expression="created"' in text
    )  # unsafe: kept
    _check(capsys, ".", "--fix", "--unsafe-fixes")
    text = (tmp_path / "w.py").read_text(encoding="utf-8")
    assert 'expression="*")' in text and 'expression="x || y")' in text
    assert "created" not in text and 'd.subscribe("T4", handle, expression="paid")' in text
    assert 'expression="a || *"' in text  # match-all or just 'a': a person decides
    code, out, _ = _check(capsys, ".", "--format", "json")
    left = sorted({f["rule"] for f in json.loads(out)["findings"] if f["rule"] in ("SG401", "SG107")})
    assert left == ["SG401"]


def test_unsafe_fixes_alone_is_a_usage_error(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _check(capsys, ".", "--unsafe-fixes")
    assert code == 2 and "--unsafe-fixes needs --fix or --diff" in err


def test_a_file_changed_since_it_was_read_is_not_written(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from subguard.core.config import load_config
    from subguard.fix import run as fixing
    from subguard.rules.judge import RuleSet, judge
    from subguard.rules.policy import load_policies
    from subguard.scan.extraction import scan_repo

    config = load_config(None, repo)
    results = [scan_repo(repo, config)]
    findings = judge(results, RuleSet.of(load_policies()), config).findings
    planned = fixing.fix(results, findings, config, unsafe=False, apply=False)
    assert planned.outcome.changed
    (repo / "a.py").write_text((repo / "a.py").read_text(encoding="utf-8") + "# edited meanwhile\n", encoding="utf-8")
    from subguard.fix.apply import write

    moved = write(planned.outcome)
    assert moved and moved[0].endswith("a.py")
    assert re.fullmatch(r"\s*M a.py\s*", _git(repo, "status", "--porcelain"))  # no other file was written


def test_a_fix_in_one_sample_leaves_the_other_samples_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Samples are judged apart (`samples-apart`): SG103 inside one sample folder rewrites that sample's
    members only, never another sample's consumer that shares the group name."""
    body = 'from rocketmq.client import PushConsumer\n\nc = PushConsumer("demo-group")\nc.subscribe("T", h, "{}")\n'
    files = {"examples/a/one.py": "Tag1||Tag2", "examples/a/two.py": "Tag2||Tag1", "examples/b/one.py": "Tag2||Tag1"}
    for rel, tags in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(body.format(tags), encoding="utf-8")
    code, out, _ = _check(capsys, str(tmp_path), "--format", "json")
    [f] = [f for f in json.loads(out)["findings"] if f["rule"] == "SG103"]
    assert (f["sample"], f["code"]) == ("examples/a", "example")
    _check(capsys, str(tmp_path), "--fix", "--fail-on", "none")
    after = {rel: (tmp_path / rel).read_text(encoding="utf-8") for rel in files}
    assert '"Tag1||Tag2"' in after["examples/a/one.py"] and '"Tag1||Tag2"' in after["examples/a/two.py"]
    assert after["examples/b/one.py"] == body.format("Tag2||Tag1")
