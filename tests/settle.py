"""For tests that run the console entry in a subprocess and then read or change its caches."""

from __future__ import annotations

from collections.abc import Mapping

from subguard.cli import background
from subguard.core import signing


def settle(env: Mapping[str, str]) -> None:
    """Wait until the fork of the last console `check` run with `env` has written its caches and its
    run memo (`subguard.cli.background`), as the next run would wait."""
    assert background.wait(home=signing.cache_home(env)), "a run's fork wrote for over a minute"
