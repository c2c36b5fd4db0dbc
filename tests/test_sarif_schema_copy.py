"""The vendored SARIF schema is the official one the project was given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import SARIF_SCHEMA

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "schemas" / "sarif-schema-2.1.0.json"


def test_vendored_schema_is_sarif_2_1_0() -> None:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]


def test_vendored_schema_equals_the_shared_copy() -> None:
    if not SHARED.is_file():
        pytest.skip("no ../shared checkout beside this clone to compare with")
    assert SARIF_SCHEMA.read_bytes() == SHARED.read_bytes()
