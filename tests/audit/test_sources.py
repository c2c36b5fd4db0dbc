"""SOURCE kinds and inventory files (no Spark), and the output folder checked before any work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from subguard.audit import sources as src
from tests.audit.conftest import ORG


def test_classify_by_name_and_children() -> None:
    assert src.classify("file:/o/inv.yaml", False, []).kind == "inventory"
    assert src.classify("file:/o/inv.CSV", False, []).kind == "inventory"
    assert src.classify("file:/o/a.jsonl", False, []).kind == "jsonl"
    assert src.classify("file:/o", True, [("a", True), ("inventory.yaml", False)]).kind == "repos"
    assert src.classify("file:/o", True, [("a.jsonl", False), ("b.jsonl", False)]).kind == "jsonl"
    with pytest.raises(src.SourceError, match="empty folder"):
        src.classify("file:/o", True, [(".git", True)])
    with pytest.raises(src.SourceError, match="not a folder"):
        src.classify("file:/o/readme.md", False, [])


def test_yaml_inventory_resolves_relative_paths_and_hints() -> None:
    text = "repos:\n  - {name: a, path: a, team: t1, environment: prod}\n  - {path: s3a://bucket/b}\n  - c\n"
    hints = src.parse_inventory(text, "file:/org/inventory.yaml")
    assert [(h.name, h.uri, h.team, h.environment) for h in hints] == [
        ("a", "file:/org/a", "t1", "prod"),
        ("b", "s3a://bucket/b", "", ""),
        ("c", "file:/org/c", "", ""),
    ]


def test_csv_inventory_and_duplicates() -> None:
    text = "repo,path,team,owner,environment\nx,/abs/x,pay,ann,test\n"
    (hint,) = src.parse_inventory(text, "/org/list.csv")
    assert (hint.name, hint.uri, hint.team, hint.owner, hint.environment) == ("x", "/abs/x", "pay", "ann", "test")
    with pytest.raises(src.SourceError, match="listed twice"):
        src.parse_inventory("- a\n- a\n", "/org/i.yaml")
    with pytest.raises(src.SourceError, match="invalid YAML"):
        src.parse_inventory("repos: [", "/org/i.yaml")


def test_merge_hints_keeps_first_values() -> None:
    merged = src.merge_hints([src.RepoHint("a", team="t"), src.RepoHint("a", team="u", owner="o")])
    assert (merged["a"].team, merged["a"].owner) == ("t", "o")


def test_repo_of_jsonl() -> None:
    assert src.repo_of_jsonl("file:/x/orders-py.jsonl") == "orders-py"


@pytest.mark.slow
def test_an_output_path_that_cannot_be_a_folder_ends_the_run_with_a_clear_error(
    spark: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Checked first, before any work: exit 2 and one line naming the path, no JVM stack trace."""
    from subguard.audit import job

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n", encoding="utf-8")
    code = job.main([str(ORG), "--out", str(blocker / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{blocker}/out: cannot create the output folder" in err
    assert "Traceback" not in err and "\tat " not in err
    assert not any("extract" in line for line in err.splitlines())  # nothing was scanned
