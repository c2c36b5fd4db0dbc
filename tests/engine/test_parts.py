"""The engine judges a run's groups part by part (`Universe.parts`, `KindSpec.per_group`), and keeps
each part's judgement by what it judged (`evalmemo.Parts`): the findings equal a judgement of the
whole universe, and an edit re-judges only the group it changed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from subguard.core.config import Config, load_config
from subguard.core.model import Finding
from subguard.rules import engine, subjects
from subguard.rules.policy import load_policies
from subguard.scan.extraction import ScanResult, scan_repo
from tests.engine.records import consumer, result, sub
from tests.fixture_cases import REPO_CASES, case_id

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "org"
POLICIES = load_policies()


def _whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every kind judged over the whole universe, as the engine judged before it had parts."""
    monkeypatch.setattr(
        engine, "kind_spec", lambda kind: dataclasses.replace(subjects.kind_spec(kind), per_group=False)
    )


def _cases() -> list[tuple[str, list[ScanResult], Config]]:
    out = []
    for case in REPO_CASES:
        if (case / "base").is_dir():  # a change case: its head is a repository case of its own rule
            continue
        config = load_config(None, case)
        repos = case / "repos"
        roots = sorted(r for r in repos.iterdir() if r.is_dir()) if repos.is_dir() else [case]
        out.append((case_id(case), [scan_repo(r, config, repo=r.name) for r in roots], config))
    config = load_config(None, EXAMPLES)
    roots = sorted(r for r in EXAMPLES.iterdir() if r.is_dir())
    out.append(("examples/org", [scan_repo(r, config, repo=r.name) for r in roots], config))
    return out


def test_judging_by_parts_equals_judging_the_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over every rule fixture and the example organisation (deployments, environments, unknown
    groups, samples, several repositories), with every policy."""
    cases = _cases()
    by_parts = {name: engine.evaluate(results, POLICIES, config) for name, results, config in cases}
    rules = {f.rule for found in by_parts.values() for f in found}  # of every kind of subject
    assert rules >= {"SG101", "SG102", "SG107", "SG201", "SG203", "SG301", "SG302", "SG401", "SG902", "SG906"}
    _whole(monkeypatch)
    for name, results, config in cases:
        assert engine.evaluate(results, POLICIES, config) == by_parts[name], name


def test_a_beyond_judgement_by_parts_equals_the_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lone consumer whose group is unknown, judged as one repository of an organisation."""
    res = result(consumer(None, sub("T", "a", "a.py", 1)), consumer("g", sub("T", "b", "b.py", 2)))
    found = engine.evaluate([res], POLICIES, Config(), beyond=True)
    assert "SG902" in {f.rule for f in found}
    _whole(monkeypatch)
    assert engine.evaluate([res], POLICIES, Config(), beyond=True) == found


def _digested(res: ScanResult, digest: str) -> ScanResult:
    return dataclasses.replace(res, digest=digest)  # as a cached scan's: the judgement may be reused


def test_an_edit_judges_again_only_the_group_it_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("SUBGUARD_CACHE_DIR", raising=False)
    judged: list[set[str]] = []
    judge = engine._judge
    monkeypatch.setattr(
        engine,
        "_judge",
        lambda chosen, u: judged.append({c.group.value or "?" for c in u.consumers}) or judge(chosen, u),
    )
    members = [consumer(f"g{n % 4}", sub(f"T{n % 3}", f"tag{n % 2}", f"m{n}.py", n + 1)) for n in range(12)]
    members.append(consumer(None, sub("T0", "x", "dyn.py", 1)))

    def run(consumers: list[object], digest: str) -> list[Finding]:
        judged.clear()
        return engine.evaluate([_digested(result(*consumers), digest)], POLICIES, Config())  # type: ignore[arg-type]

    first = run(members, "a")
    everything = len(judged)
    assert everything == 4 + 1 + 1  # four groups, the consumer whose group is unknown, the whole
    assert run(members, "a") == first and judged == []  # the same records: the last answer
    edited = [*members]
    edited[5] = consumer("g1", sub("T2", "tag0||tagZ", "m5.py", 6))
    again = run(edited, "b")
    assert judged[:-1] == [{"g1"}] and len(judged) == 2, judged  # the edited group's part, then the whole
    assert {f.group for f in again} ^ {f.group for f in first} <= {"g1"}
    monkeypatch.setattr(engine, "_judge", judge)
    assert again == engine.evaluate([result(*edited)], POLICIES, Config())  # as judged without a memo
    assert first == engine.evaluate([result(*members)], POLICIES, Config())


def test_part_judgements_are_kept_per_policies_and_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("SUBGUARD_CACHE_DIR", raising=False)
    a = consumer("g", sub("T", "tag1", "a.py", 1))
    b = consumer("g", sub("T", "tag2", "b.py", 1))
    res = _digested(result(a, b), "x")
    assert [f.rule for f in engine.evaluate([res], POLICIES, Config())] == ["SG102"]
    narrowed = Config(ignore=("SG102",))
    assert engine.evaluate([res], POLICIES, narrowed) == engine.evaluate([result(a, b)], POLICIES, narrowed)
    assert "SG102" not in {f.rule for f in engine.evaluate([_digested(result(a, b), "y")], POLICIES, narrowed)}


def test_a_record_is_written_as_json_once_and_as_pydantic_writes_it() -> None:
    """`recordjson`: the scrub's check, the part digests and the impact memo's keys read the same
    bytes; a record with a lone surrogate is refused (and scrubbed) as before, and never kept."""
    import pydantic_core

    from subguard.core import recordjson
    from subguard.core.limits import scrub

    members = (consumer("g", sub("T", "a||b", "a.py", 1)), consumer("g", sub("T", "c", "b.py", 2)))
    assert scrub(members) is members
    assert all(id(c) in recordjson._MADE for c in members)  # written by the scrub's check
    assert recordjson.json_list(members) == pydantic_core.to_json(list(members))
    broken = consumer("g\ud800", sub("T", "a", "c.py", 1))
    with pytest.raises(pydantic_core.PydanticSerializationError):
        recordjson.json_of(broken)
    assert id(broken) not in recordjson._MADE
    assert scrub((broken,))[0].group.value == "g\ufffd"
