"""`subguard rules` and `subguard explain` through `subguard.cli.main.main`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from subguard.cli.main import main


def test_rules_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["id", "name", "severity", "scope", "summary"]
    row = next(line for line in out if line.startswith("SG102"))
    assert row.split()[:4] == ["SG102", "group-tag-set-mismatch", "error", "group/topic"]


def test_rules_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--format", "json"]) == 0
    docs = {d["id"]: d for d in json.loads(capsys.readouterr().out)}
    assert docs["SG401"]["why"] and docs["SG403"]["references"]


def test_explain_sections(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "sg102"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("SG102 group-tag-set-mismatch (error, scope group/topic)")
    for title in ("What it does", "Why is this bad?", "Example", "Use instead", "References"):
        assert f"\n{title}\n" in out


def test_explain_unknown_id(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "SG999"]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == "subguard: unknown rule 'SG999' (see `subguard rules`)"
    assert captured.out == ""


def test_broken_user_policy_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "X1-bad.yaml").write_text("id: X1\nname: bad\n", encoding="utf-8")
    assert main(["rules", "--policies", str(tmp_path)]) == 2
    assert f"{tmp_path / 'X1-bad.yaml'}: " in capsys.readouterr().err
