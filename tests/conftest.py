"""Suite-wide isolation: subguard's caches go to a temporary directory, never into the fixtures of
this checkout (`<root>/.subguard_cache`) or the developer's `~/.cache/subguard`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True, scope="session")
def _isolated_subguard_caches(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    base: Path = tmp_path_factory.mktemp("subguard-caches")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SUBGUARD_CACHE_DIR", str(base / "content"))
        mp.setenv("XDG_CACHE_HOME", str(base / "xdg"))
        yield


SARIF_SCHEMA = Path(__file__).resolve().parents[1] / ".." / "shared" / "schemas" / "sarif-schema-2.1.0.json"


def load_sarif_validator() -> Any:
    """The official SARIF 2.1.0 schema (from ../shared/schemas) as a validator, formats checked;
    the test is skipped when the shared checkout is absent."""
    if not SARIF_SCHEMA.is_file():
        pytest.skip(f"SARIF schema not found at {SARIF_SCHEMA} (the shared checkout is absent)")
    import jsonschema

    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())


@pytest.fixture(scope="session")
def sarif_validator() -> Any:
    return load_sarif_validator()
