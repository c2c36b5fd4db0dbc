"""Suite-wide isolation: subguard's caches go to a temporary directory, never into the fixtures of
this checkout (`<root>/.subguard_cache`) or the developer's `~/.cache/subguard`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True, scope="session")
def _isolated_subguard_caches(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    base: Path = tmp_path_factory.mktemp("subguard-caches")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SUBGUARD_CACHE_DIR", str(base / "content"))
        mp.setenv("XDG_CACHE_HOME", str(base / "xdg"))
        yield
