"""Reading `subguard check --format json` in tests: `{"findings": [...], "diagnostics": [...]}`."""

from __future__ import annotations

import json
from typing import Any


def all_findings(text_or_data: str | dict[str, Any]) -> list[dict[str, Any]]:
    """Every finding of a JSON report, diagnostics (SG9xx) included, in report order."""
    data = json.loads(text_or_data) if isinstance(text_or_data, str) else text_or_data
    assert isinstance(data, dict) and set(data) >= {"findings", "diagnostics"}, "a JSON report is an object"
    return [*data["findings"], *data["diagnostics"]]
