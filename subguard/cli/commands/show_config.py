"""`subguard check --show-config`: the effective settings of a run and where each one came from."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from subguard.core.config import Config

DEFAULT, COMMAND_LINE = "default", "command line"


def _shown(value: Any) -> str:
    """A value as one line of YAML-ish text (JSON for anything structured)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return value if value and value.strip() == value and value[0] not in "[{'\"#" else json.dumps(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def origins(file_config: Config, cli: Mapping[str, Any]) -> dict[str, str]:
    """Per config key (its written, kebab-case name): default, the config file, or the command line."""
    out: dict[str, str] = {}
    for name, field in Config.model_fields.items():
        if name == "source":
            continue
        key = field.alias or name
        if name in cli:
            out[key] = COMMAND_LINE
        elif name in file_config.model_fields_set and file_config.source:
            out[key] = file_config.source
        else:
            out[key] = DEFAULT
    return out


def describe(
    config: Config,
    file_config: Config,
    cli: Mapping[str, Any],
    searched: Sequence[Path],
    policy_dirs: Sequence[Path],
    caches: Sequence[Path],
) -> str:
    """The report: which file was used (or where none was found), every key with its value and
    origin, then what the settings resolve to (policy folders, content caches)."""
    if file_config.source:
        head = [f"# config file: {file_config.source}"]
    else:
        head = [
            "# config file: none (defaults); looked for .subguard.yaml, .subguard.yml and a pyproject.toml",
            "# with [tool.subguard] in: " + ", ".join(sorted({str(p.parent) for p in searched})),
        ]
    data = config.model_dump(by_alias=True, exclude={"source"}, mode="json")
    where = origins(file_config, cli)
    rows = [(f"{key}: {_shown(data[key])}", where[key]) for key in data]
    width = min(max(len(r) for r, _ in rows), 40)  # one long value must not push every comment away
    lines = [*head, *(f"{row.ljust(width)}  # {origin}" for row, origin in rows)]
    lines.append("# policy folders: " + ", ".join(str(p) for p in policy_dirs))
    lines.append("# content caches: " + ", ".join(str(p) for p in caches))
    return "\n".join(lines) + "\n"
