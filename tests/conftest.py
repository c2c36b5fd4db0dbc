"""Suite-wide isolation: subguard's caches go to a temporary directory, never into the fixtures of
this checkout (`<root>/.subguard_cache`) or the developer's `~/.cache/subguard`, and no run is handed to
a resident server the developer started (`subguard serve`: its sockets live under `XDG_RUNTIME_DIR`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "subguard"


def pytest_configure(config: pytest.Config) -> None:
    """Compile subguard's modules once, before any test runs: the suite starts subguard in hundreds of
    subprocesses, and in a fresh checkout where Python writes no bytecode (PYTHONDONTWRITEBYTECODE is
    set on the development VM) each would compile every module it imports again, about half a second
    of CPU each on a 2-core VM, until a test whose subprocesses run without that variable happens to
    write it. The bytecode goes where Python looks for it (`__pycache__`, ignored by git); a module a
    test changes is still compiled anew."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller did it before starting it
        return
    import compileall

    compileall.compile_dir(str(PACKAGE), quiet=2)


@pytest.fixture(autouse=True, scope="session")
def _isolated_subguard_caches(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    base: Path = tmp_path_factory.mktemp("subguard-caches")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SUBGUARD_CACHE_DIR", str(base / "content"))
        mp.setenv("XDG_CACHE_HOME", str(base / "xdg"))
        mp.setenv("XDG_RUNTIME_DIR", str(base / "run"))
        yield


SARIF_SCHEMA = Path(__file__).resolve().parent / "schemas" / "sarif-schema-2.1.0.json"
"""The official OASIS SARIF 2.1.0 schema, vendored so that SARIF is validated on every clone
(tests/test_sarif_schema_copy.py keeps it byte-equal to ../shared/schemas when that is present)."""


def load_sarif_validator() -> Any:
    """The official SARIF 2.1.0 schema as a Draft 4 validator with formats checked."""
    import jsonschema

    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())


@pytest.fixture(scope="session")
def sarif_validator() -> Any:
    return load_sarif_validator()
