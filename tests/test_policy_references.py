"""`subguard explain` references are whole and public: every reference is a URL a reader can open
(RocketMQ's documentation, a source file at a tag, an issue or pull request), none is cut short by
the YAML loader (a plain scalar ends at " #"), and no rule's docs cite a document users do not have."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from subguard.cli.main import main
from subguard.rules.policy import BUILTIN_DIR, load_policy

POLICY_FILES = sorted(BUILTIN_DIR.glob("*.y*ml"))
PRIVATE = re.compile(r"rocketmq-semantics|\bseeds?[ /]?0\d\d|seeds/|DESIGN\.md|USERS-EXPECT|§")
URL = re.compile(r"https://[^\s\"'<>]+")


def raw_references(text: str) -> list[str]:
    """The references block as written in the file: one item per `    - ` line, unquoted by hand."""
    lines = text.splitlines()
    start = lines.index("  references:") + 1
    out = []
    for line in lines[start:]:
        if not line.startswith("    - "):
            break
        item = line[len("    - ") :]
        out.append(json.loads(item) if item.startswith('"') else item.strip())
    return out


@pytest.mark.parametrize("path", POLICY_FILES, ids=[p.stem for p in POLICY_FILES])
def test_references_are_whole_public_links(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    loaded = list(load_policy(path).doc.references)
    assert loaded == raw_references(text), "a reference was cut by the YAML loader (quote it)"
    for ref in loaded:
        assert URL.match(ref), f"{path.name}: not a link: {ref!r}"
        if "github.com/apache/rocketmq/blob/" in ref:  # source files at a tag, never a moving branch
            assert "/blob/rocketmq-all-" in ref, ref
    assert not PRIVATE.search(text), f"{path.name} cites a document users do not have: {PRIVATE.search(text)}"


def test_explain_prints_them_whole(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "SG102"]) == 0
    out = capsys.readouterr().out
    assert "https://github.com/apache/rocketmq/pull/92 (ROCKETMQ-175" in out
    assert not PRIVATE.search(out)


def test_the_check_catches_a_cut_reference(tmp_path: Path) -> None:
    """The cut this test exists for: an unquoted `apache/rocketmq PR #92` loads as `apache/rocketmq PR`."""
    source = POLICY_FILES[0].read_text(encoding="utf-8")
    cut = source.replace("  references:\n", "  references:\n    - apache/rocketmq PR #92 (ROCKETMQ-175)\n", 1)
    path = tmp_path / POLICY_FILES[0].name
    path.write_text(cut, encoding="utf-8")
    assert load_policy(path).doc.references[0] == "apache/rocketmq PR"
    assert load_policy(path).doc.references[0] != raw_references(cut)[0]
