"""Java facts pickle as tuples (`compact`) and come back equal, field for field."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

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
