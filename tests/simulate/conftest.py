"""Fixtures for simulator tests: run an example scenario or a scenario dict."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from subguard.simulate.runs import Report, simulate_runs
from subguard.simulate.scenario import compile_scenario, load_scenario, parse_scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"


@pytest.fixture
def run_example() -> Callable[..., Report]:
    def run(name: str, runs: int, seed: int = 0) -> Report:
        return simulate_runs(compile_scenario(load_scenario(EXAMPLES / name)), runs, seed)

    return run


@pytest.fixture
def run_dict() -> Callable[..., Report]:
    def run(data: dict[str, Any], runs: int, seed: int = 0) -> Report:
        return simulate_runs(compile_scenario(parse_scenario(data)), runs, seed)

    return run
