"""Control characters in scanned text are escaped for terminal output (`limits.escape_controls`)."""

from __future__ import annotations

import sys

from hypothesis import given
from hypothesis import strategies as st

from subguard.core.limits import _CONTROL, escape_controls
from subguard.core.members import MEMBERS, Member
from subguard.core.model import Finding, Location, Related, Severity


def _by_pattern(text: str) -> str:
    """The escape as the pattern alone writes it (no shortcut for printable text)."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def test_every_character_the_pattern_escapes_is_unprintable() -> None:
    """What lets printable text skip the pattern: every character of it is unprintable."""
    printable = [hex(c) for c in range(sys.maxunicode + 1) if _CONTROL.match(chr(c)) and chr(c).isprintable()]
    assert printable == []


@given(st.text(alphabet=st.characters(codec=None), max_size=40))
def test_any_text_is_escaped_as_the_pattern_escapes_it(text: str) -> None:
    assert escape_controls(text) == _by_pattern(text)


def test_a_findings_strings_are_escaped_and_the_rest_is_shared() -> None:
    where = Location(path="a.py", line=3, repo="r")
    clean = Finding(rule="SG101", severity=Severity.ERROR, message="plain", location=where)
    hostile = Finding(
        rule="SG101",
        severity=Severity.ERROR,
        message="g\n::error file=x::y\x1b[31m\u202e",
        location=where,
        group="g\x07",
        related=(Related(location=where, message="ok"),),
        properties=((MEMBERS, (Member(location=where, message="m\r"), Member(location=where))),),
    )
    out = escape_controls((clean, hostile))
    assert out[0] is clean  # nothing to escape: the very object
    assert out[1].message == "g\\n::error file=x::y\\x1b[31m\\u202e"
    assert out[1].group == "g\\x07"
    assert out[1].related is hostile.related and out[1].location is where
    members = dict(out[1].properties)[MEMBERS]
    assert [m.message for m in members] == ["m\\r", ""]
    assert members[1] is dict(hostile.properties)[MEMBERS][1]
