"""Java facts pickle as tuples (`compact`) and come back equal, field for field."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from pathlib import Path

import pytest

from subguard.extract.java.compact import compact
from subguard.extract.java.facts import Expr, java_facts


def test_facts_come_back_equal_from_a_smaller_pickle() -> None:
    paths = sorted(Path(__file__).parents[1].glob("fixtures/java*/**/*.java"))
    assert paths
    for path in paths:
        facts = java_facts(path.read_bytes())
        again = pickle.loads(pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL))
        assert again == facts and repr(again) == repr(facts), path
        assert copy.deepcopy(facts) == facts
    expr = Expr("str", "TopicA", line=3, column=7, source='"TopicA"')
    assert isinstance(expr.__getstate__(), tuple)
    assert b"source" not in pickle.dumps(expr)  # no field names in the pickle


@compact
@dataclasses.dataclass(frozen=True)
class _One:
    name: str


@compact
@dataclasses.dataclass(frozen=True)
class _Nothing:
    pass


def test_records_of_one_field_or_none_come_back_too() -> None:
    """The restore is made per class (one unpacking of the tuple): also for one field, or none."""
    for record in (_One("a"), _Nothing()):
        again = pickle.loads(pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL))
        assert again == record and vars(again) == vars(record)
    assert _One("a").__getstate__() == ("a",)
    with pytest.raises(ValueError):
        _Nothing().__setstate__((1,))  # type: ignore[attr-defined]
    with pytest.raises(ValueError):  # a tuple of another length is refused, as a record of other fields
        _One("a").__setstate__(("a", "b"))  # type: ignore[attr-defined]
