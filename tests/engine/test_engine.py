"""The engine over real records: group rules, fan-out, variants, unknowns, tool findings."""

from __future__ import annotations

from subguard.core.config import Config
from subguard.core.model import ClientFamily, FileRecord, FileStatus, Severity
from subguard.rules.engine import evaluate
from subguard.rules.policy import load_policies
from subguard.scan.extraction import ScanResult
from tests.engine.records import consumer, result, sub

POLICIES = load_policies()
MINE = ("SG1", "SG4", "SG9")  # the rules this suite covers; SG2xx/SG3xx have their own tests
CONFIG = Config(select=MINE)


def run(*results: ScanResult, config: Config = CONFIG) -> list:
    return evaluate(results, POLICIES, config)


def rules(findings: list) -> list[tuple[str, str, int]]:
    return [(f.rule, f.location.path, f.location.line) for f in findings]


def test_seed_002_tag1_vs_tag2_names_both_locations() -> None:
    a = consumer("test-consumer", sub("TopicTest2", "tag1", "a.py", 10))
    b = consumer("test-consumer", sub("TopicTest2", "tag2", "b.py", 7))
    findings = run(result(a, b))
    assert rules(findings) == [("SG102", "a.py", 10)]
    f = findings[0]
    assert f.severity is Severity.ERROR
    assert (
        f.message
        == "Group 'test-consumer' subscribes topic 'TopicTest2' with different tag sets: {tag1} at a.py:10, {tag2} at b.py:7"
    )
    assert [(r.location.path, r.location.line) for r in f.related] == [("b.py", 7)]
    assert "'tag2'" in f.related[0].message
    assert (f.group, f.topic) == ("test-consumer", "TopicTest2")


def test_fingerprint_survives_line_moves_and_member_order() -> None:
    a = consumer("g", sub("T", "tag1", "a.py", 10))
    b = consumer("g", sub("T", "tag2", "b.py", 7))
    moved = consumer("g", sub("T", "tag1", "a.py", 99))
    assert run(result(a, b))[0].fingerprint == run(result(b, moved))[0].fingerprint


def test_group_spanning_repos_is_one_group() -> None:
    a = consumer("g", sub("T", "tag1", "a.py", 1, repo="svc-a"), repo="svc-a")
    b = consumer("g", sub("T", "tag2", "b.py", 2, repo="svc-b"), repo="svc-b")
    findings = run(result(a, repo="svc-a"), result(b, repo="svc-b"))
    assert rules(findings) == [("SG102", "a.py", 1)]
    assert "svc-a:a.py:1" in findings[0].message and "svc-b:b.py:2" in findings[0].message


def test_seed_003_wrong_cases() -> None:
    topics = run(result(consumer("g1", sub("TopicA", "*", "a.py", 1)), consumer("g1", sub("TopicB", "*", "b.py", 1))))
    assert [f.rule for f in topics] == ["SG101"]
    tags = run(
        result(consumer("g2", sub("TopicA", "Tag1", "a.py", 1)), consumer("g2", sub("TopicA", "Tag2", "b.py", 1)))
    )
    assert [f.rule for f in tags] == ["SG102"]
    order = run(
        result(
            consumer("g3", sub("TopicA", "Tag1||Tag2", "a.py", 1)),
            consumer("g3", sub("TopicA", "Tag2||Tag1", "b.py", 1)),
        )
    )
    assert [f.rule for f in order] == ["SG103"]
    assert order[0].severity is Severity.WARNING


def test_seed_003_right_cases() -> None:
    same_all = result(consumer("g1", sub("TopicA", "*", "a.py", 1)), consumer("g1", sub("TopicA", "*", "b.py", 1)))
    same_tags = result(
        consumer("g2", sub("TopicA", "Tag1||Tag2", "a.py", 1)), consumer("g2", sub("TopicA", "Tag1||Tag2", "b.py", 1))
    )
    assert run(same_all) == [] and run(same_tags) == []


def test_spacing_difference_is_sg103() -> None:
    found = run(result(consumer("g", sub("T", "a||b", "a.py", 1)), consumer("g", sub("T", "a || b", "b.py", 1))))
    assert [f.rule for f in found] == ["SG103"]


def test_extra_topic_on_one_member_is_sg101() -> None:
    a = consumer("g", sub("T1", "*", "a.py", 1))
    b = consumer("g", sub("T1", "*", "b.py", 1))
    z = consumer("g", sub("T1", "*", "z.py", 1), sub("T2", "*", "z.py", 2))
    found = run(result(a, b, z))
    assert [f.rule for f in found] == ["SG101"]
    assert found[0].location.path == "z.py"  # the smallest variant is primary
    assert [r.location.path for r in found[0].related] == ["a.py", "b.py"]
    assert (
        found[0].message
        == "Group 'g' members subscribe different topic sets: {T1} at a.py:1 and b.py:1, {T1, T2} at z.py:1"
    )


def test_type_mismatch_is_sg104_only() -> None:
    a = consumer("g", sub("T", "a > 1", "a.py", 1, sql=True), client=ClientFamily.JAVA_5X)
    b = consumer("g", sub("T", "TagA", "b.py", 1), client=ClientFamily.JAVA_5X)
    assert [f.rule for f in run(result(a, b))] == ["SG104"]


def test_message_model_mix_is_sg105() -> None:
    a = consumer("g", sub("T", "*", "a.py", 1), model="BROADCASTING")
    b = consumer("g", sub("T", "*", "b.py", 1))
    found = run(result(a, b))
    assert [f.rule for f in found] == ["SG105"]
    assert "BROADCASTING at a.py:1" in found[0].message


def test_generation_mix_is_sg106() -> None:
    a = consumer("g", sub("T", "x", "a.py", 1), client=ClientFamily.PYTHON_NATIVE_4X)
    b = consumer("g", sub("T", "x", "B.java", 1), client=ClientFamily.JAVA_PUSH_4X)
    assert [f.rule for f in run(result(a, b))] == ["SG106"]
    lite = consumer("g", sub("T", "x", "C.java", 1), client=ClientFamily.JAVA_LITE_PULL)
    assert run(result(a, lite)) == []  # both carry their own expression: no table filtering


def test_overridden_subscribe_is_sg107() -> None:
    first = sub("T", "created", "a.py", 3)
    c = consumer("g", sub("T", "paid", "a.py", 4), overridden=(first,))
    found = run(result(c))
    assert rules(found) == [("SG107", "a.py", 3)]
    assert found[0].related[0].location.line == 4
    same = consumer("g", sub("T", "paid", "a.py", 4), overridden=(sub("T", "paid", "a.py", 3),))
    assert run(result(same)) == []


def test_smells_sql_and_names() -> None:
    c = consumer(
        "order.group",
        sub("T", " ", "a.py", 1),
        sub("T2", "a||", "a.py", 2),
        sub("T3", "price > 0.0", "a.py", 3, sql=True),
        sub("bad topic", "*", "a.py", 4),
        client=ClientFamily.JAVA_PUSH_4X,
    )
    found = {(f.rule, f.location.line, f.severity.value) for f in run(result(c))}
    assert found == {
        ("SG401", 1, "error"),
        ("SG401", 2, "warning"),
        ("SG402", 3, "error"),
        ("SG403", 1, "error"),  # group name, at the consumer
        ("SG403", 4, "error"),
    }


def test_unknown_expression_gives_sg902_not_silence() -> None:
    a = consumer("g", sub("T", "tag1", "a.py", 1))
    b = consumer("g", sub("T", None, "b.py", 5))
    found = run(result(a, b))
    assert rules(found) == [("SG902", "b.py", 5)]
    assert found[0].severity is Severity.NOTE
    # one note for the blind spot, naming the group rules it can hide; an unknown expression cannot hide
    # a finding of a rule that judges the subscription alone (SG401), so that rule is not named
    assert "SG102" in found[0].message and "SG401" not in found[0].message


def test_known_disagreement_wins_over_unknown_member() -> None:
    found = run(
        result(
            consumer("g", sub("T", "tag1", "a.py", 1)),
            consumer("g", sub("T", "tag2", "b.py", 1)),
            consumer("g", sub("T", None, "c.py", 1)),
        )
    )
    # SG102 is decided without the unknown member, and no other group rule is blinded by it: no note
    assert [f.rule for f in found] == ["SG102"]


def test_unknown_group_is_not_grouped_and_noted() -> None:
    found = run(result(consumer(None, sub("T", "tag1", "a.py", 1)), consumer("g", sub("T", "tag2", "b.py", 1))))
    assert rules(found) == [("SG902", "a.py", 1)]
    assert "SG101" in found[0].message and "SG102" in found[0].message and "group" in found[0].message


def test_a_construction_with_several_unknown_parts_gets_one_note() -> None:
    """One note per blind spot: the unknown topic and expression of one construction are one note, at
    the construction, naming every rule they blind and each reason."""
    blind = consumer("g", sub(None, "tag1", "a.py", 3), sub("T", None, "a.py", 4), path="a.py", line=2)
    found = run(result(blind, consumer("g", sub("T", "tag2", "b.py", 1))))
    [note] = [f for f in found if f.rule == "SG902"]
    assert (note.location.path, note.location.line) == ("a.py", 2)
    assert note.message.startswith(
        "topic of the subscription and expression of the subscription are not statically known"
    )
    assert "SG101" in note.message and "SG102" in note.message


def test_a_lone_construction_can_hide_no_group_finding() -> None:
    assert [f.rule for f in run(result(consumer(None, sub("T", "tag1", "a.py", 1))))] == []


def test_a_lone_construction_that_makes_several_consumers_is_noted() -> None:
    """doudoudrive's factory, called once per listener from a lambda: one declaration, several consumers
    at run time, which can share their unknown group."""
    lone = consumer(None, sub("T", "tag1", "a.py", 1)).model_copy(update={"repeated": True})
    assert rules(run(result(lone))) == [("SG902", "a.py", 1)]


def test_failed_files_are_sg901_with_line() -> None:
    res = ScanResult(
        root="/tmp/r",
        repo="r",
        consumers=(),
        deployments=(),
        files=(
            FileRecord(path="x.py", status=FileStatus.FAILED, reason="syntax error at line 7"),
            FileRecord(path="y.py", status=FileStatus.PARSED),
        ),
    )
    found = run(res)
    assert rules(found) == [("SG901", "x.py", 7)]
    assert found[0].location.repo == "r"


def test_select_and_ignore_prefixes() -> None:
    res = result(
        consumer("g", sub("T", "tag1", "a.py", 1)), consumer("g", sub("T", "tag2", "b.py", 1), model="BROADCASTING")
    )
    assert [f.rule for f in run(res)] == ["SG102", "SG105"]
    assert [f.rule for f in run(res, config=Config(select=("SG10",), ignore=("SG105",)))] == ["SG102"]


def test_deterministic_order() -> None:
    members = [consumer("g", sub("T", f"t{i}", f"m{i}.py", i)) for i in range(5)]
    first = run(result(*members))
    assert first == run(result(*reversed(members)))


def test_user_policy_runs_with_builtins(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "ACME001-no-star.yaml").write_text(
        "id: ACME001\nname: no-star\nseverity: warning\nscope: subscription\n"
        "message: \"'{topic}' of '{group}' takes every message\"\n"
        "condition: {all: [{field: expression, op: eq, value: '*'}, {field: group, op: matches, value: '^pay-'}]}\n"
        "docs: {summary: No star in payment groups, what: Flags '*' in pay- groups.}\n",
        encoding="utf-8",
    )
    policies = load_policies([tmp_path])
    res = result(consumer("pay-core", sub("T", "*", "a.py", 3)), consumer("shop", sub("T", "*", "b.py", 4)))
    found = evaluate([res], policies, Config(select=("ACME",)))
    assert [(f.rule, f.location.path, f.message) for f in found] == [
        ("ACME001", "a.py", "'T' of 'pay-core' takes every message")
    ]
