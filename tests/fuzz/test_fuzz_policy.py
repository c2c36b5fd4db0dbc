"""Fuzz the policy and config loaders: mutated real policy files and generated documents either load
or raise PolicyError / ConfigError (never anything else), and a policy that loads can be evaluated."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml import YAML

from subguard.core.config import ConfigError, load_file, parse_config
from subguard.rules.engine import evaluate
from subguard.rules.policy import BUILTIN_DIR, PolicyError, load_policy
from subguard.scan.extraction import ScanResult
from tests.fuzz.harness import FUZZ, SEEDS, mutated, scan_memory

POLICY_FILES = sorted(BUILTIN_DIR.glob("*.yaml"))
_RESULTS: list[ScanResult] = []


def _results() -> list[ScanResult]:
    """A small real inventory (two rule fixtures) to evaluate fuzzed policies against."""
    if not _RESULTS:
        files = {p: d for p, d in SEEDS.items() if p.startswith(("rules/SG102", "rules/SG105", "hostile/app/good"))}
        _RESULTS.append(scan_memory(files))
    return _RESULTS


def _load(name: str, text: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(text)
        try:
            policy = load_policy(path)
        except PolicyError as exc:
            assert str(exc).startswith(str(path)), exc
            return
    evaluate(_results(), [policy], parse_config({}, "fuzz"))


def test_policy_seeds_exist() -> None:
    assert len(POLICY_FILES) >= 10


@FUZZ
@given(st.sampled_from(POLICY_FILES).flatmap(lambda p: st.tuples(st.just(p.name), mutated(p.read_bytes()))))
def test_mutated_policy_files(case: tuple[str, bytes]) -> None:
    _load(*case)


SCALARS = st.one_of(
    st.text(max_size=12),
    st.integers(),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=True),
    st.sampled_from(
        ["group", "topic", "eq", "matches", "(a+)+$", "{group:>99999}", "{group.__class__}", "error", "tag_set_count"]
    ),
)
TREE = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["all", "any", "not", "field", "op", "value", "leaf"]) | st.text(max_size=6),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=20,
)


@FUZZ
@given(
    st.fixed_dictionaries(
        {"id": st.just("SG999"), "name": st.just("fuzz-rule")},
        optional={
            "severity": st.sampled_from(["error", "warning", "note", "fatal", 3]),
            "scope": st.sampled_from(["group", "subscription", "consumer", "deployment", "tool", "nope"]),
            "for_each": st.sampled_from(["topic", "tag", None, 1]),
            "message": st.sampled_from(
                ["{group} {topic}", "{variants}", "{group:>99999}", "{", "{0}", "{group!r:^30}", "plain"]
            ),
            "condition": TREE,
            "variants": st.sampled_from(["tag_sets", "x", None]),
            "severity_from": st.sampled_from(["severity", "group", None]),
            "docs": st.one_of(TREE, st.just({"summary": "s", "what": "w"})),
        },
    )
)
def test_generated_policies(doc: dict[str, object]) -> None:
    out = io.StringIO()
    YAML(typ="safe", pure=True).dump(doc, out)
    _load("SG999-fuzz-rule.yaml", out.getvalue().encode("utf-8", "surrogatepass"))


@FUZZ
@given(TREE)
def test_generated_config_data(data: object) -> None:
    try:
        parse_config(data, "fuzz")
    except ConfigError:
        pass


@FUZZ
@given(
    mutated(
        b"max-file-size: 1000\nfail-on: warning\nwaivers:\n  - {rule: SG102, group: g, reason: r, expires: 2030-01-01}\nenvironments:\n  prod: {profiles: [prod]}\n"
    )
)
def test_mutated_config_files(text: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ".subguard.yaml"
        path.write_bytes(text)
        try:
            load_file(path)
        except ConfigError:
            pass


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (b"id: SG999\nname: fuzz-rule\nwhen: 2001-13-45\n", "invalid YAML value"),  # ValueError escaped the loader
        (b"id: SG999\nname: fuzz-rule\nn: " + b"9" * 5000 + b"\n", "invalid YAML value"),
        (b"a: &a [*a, *a]\nb: &b [*a, *a]\nc: &c [*b, *b]\n", "recursive alias"),
        (
            (
                b"a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                b"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
            ),
            "aliases expand",
        ),
        (b"x: " + b"[" * 500 + b"]" * 500 + b"\n", "nested deeper"),
        (
            b"id: SG999\nname: fuzz-rule\nseverity: error\nscope: group\nmessage: '{group:>999999999}'\ndocs: {summary: s, what: w}\n",
            "format spec",
        ),
        (b"!!python/object/apply:os.system ['touch /tmp/subguard-pwned']\n", "could not determine a constructor"),
    ],
)
def test_policy_loader_regressions(text: bytes, needle: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "SG999-fuzz-rule.yaml"
        path.write_bytes(text)
        with pytest.raises(PolicyError, match=needle):
            load_policy(path)
    assert not Path("/tmp/subguard-pwned").exists()
