"""Broken policy files: a PolicyError naming the file and the key, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from subguard.rules.policy import PolicyError, load_policies, load_policy

GOOD = """\
id: ACME001
name: no-star
severity: warning
scope: subscription
message: "'{topic}' takes every tag"
condition: {field: expression, op: eq, value: "*"}
docs: {summary: Star subscriptions, what: Flags '*'.}
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def error(path: Path) -> str:
    with pytest.raises(PolicyError) as exc:
        load_policy(path)
    return str(exc.value)


def test_user_policy_loads_with_builtins(tmp_path: Path) -> None:
    write(tmp_path, "ACME001-no-star.yaml", GOOD)
    ids = [p.id for p in load_policies([tmp_path])]
    assert "ACME001" in ids and "SG102" in ids


def test_yaml_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "ACME001-no-star.yaml", GOOD + "  bad: [unclosed\n")
    assert error(path).startswith(f"{path}: line ")


def test_unknown_key(tmp_path: Path) -> None:
    path = write(tmp_path, "ACME001-no-star.yaml", GOOD + "colour: red\n")
    assert error(path) == f"{path}: colour: Extra inputs are not permitted"


def test_bad_op_names_condition_key(tmp_path: Path) -> None:
    text = GOOD.replace(
        'condition: {field: expression, op: eq, value: "*"}',
        "condition: {all: [{field: expression, op: equals, value: x}]}",
    )
    message = error(write(tmp_path, "ACME001-no-star.yaml", text))
    assert ": condition.all[0].op: Input should be" in message


def test_unknown_field_and_placeholder(tmp_path: Path) -> None:
    text = GOOD.replace("field: expression", "field: expresion")
    assert "condition: unknown field 'expresion'" in error(write(tmp_path, "ACME001-no-star.yaml", text))
    text = GOOD.replace("'{topic}'", "'{topik}'")
    assert "message: unknown placeholder {topik}" in error(write(tmp_path, "ACME001-no-star.yaml", text))


def test_file_name_must_match_id(tmp_path: Path) -> None:
    path = write(tmp_path, "ACME002-no-star.yaml", GOOD)
    assert error(path) == f"{path}: id: file name must be 'ACME001-no-star.yaml' (id 'ACME001', name 'no-star')"


def test_duplicate_id(tmp_path: Path) -> None:
    builtin = Path(__file__).resolve().parents[2] / "policies" / "SG102-group-tag-set-mismatch.yaml"
    write(tmp_path, builtin.name, builtin.read_text(encoding="utf-8"))
    with pytest.raises(PolicyError, match="id: duplicate id 'SG102'"):
        load_policies([tmp_path])


def test_bad_regex_and_value_types(tmp_path: Path) -> None:
    text = GOOD.replace('op: eq, value: "*"', 'op: matches, value: "("')
    assert "invalid regex" in error(write(tmp_path, "ACME001-no-star.yaml", text))
    text = GOOD.replace('op: eq, value: "*"', "op: gt, value: many")
    assert "needs a number" in error(write(tmp_path, "ACME001-no-star.yaml", text))


def test_not_a_mapping_and_missing_dir(tmp_path: Path) -> None:
    path = write(tmp_path, "ACME001-no-star.yaml", "- just\n- a list\n")
    assert error(path) == f"{path}: (top level): a policy must be a mapping, got list"
    with pytest.raises(PolicyError, match="policies directory not found"):
        load_policies([tmp_path / "nope"])
