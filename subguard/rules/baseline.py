"""Baseline files: accept today's findings so only new ones fail.

A baseline is JSON keyed by fingerprint (which has no line numbers, so moving code keeps findings
baselined); rule, group, topic and path are there for humans reading the diff of the file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from subguard.core.model import Finding, Suppression, fingerprint

VERSION = 1
REASON = "in baseline"


class BaselineError(Exception):
    """A baseline file that cannot be used; the message names the file."""


def with_fingerprint(f: Finding) -> Finding:
    """The finding, given a line-free fingerprint from rule, repo, group, topic and path if it has none."""
    if f.fingerprint:
        return f
    loc = f.location
    return f.model_copy(update={"fingerprint": fingerprint(f.rule, loc.repo, f.group, f.topic, loc.path)})


def dumps(findings: Sequence[Finding]) -> str:
    """Baseline text for the unsuppressed findings (sorted, one entry per fingerprint)."""
    entries: dict[str, dict[str, str]] = {}
    for f in findings:
        if f.suppressed is None and f.fingerprint:
            entries.setdefault(
                f.fingerprint, {"rule": f.rule, "group": f.group, "topic": f.topic, "path": f.location.path}
            )
    doc = {"tool": "subguard", "version": VERSION, "findings": {k: entries[k] for k in sorted(entries)}}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def loads(text: str, source: str) -> frozenset[str]:
    """The fingerprints of a baseline file; BaselineError when it is not one."""
    try:
        data: Any = json.loads(text)
    except ValueError as exc:
        raise BaselineError(f"{source}: not a subguard baseline (invalid JSON: {exc})") from None
    if not isinstance(data, dict) or data.get("tool") != "subguard" or not isinstance(data.get("findings"), dict):
        raise BaselineError(f"{source}: not a subguard baseline (expected an object with tool and findings)")
    if data.get("version") != VERSION:
        raise BaselineError(f"{source}: unsupported baseline version {data.get('version')!r} (expected {VERSION})")
    return frozenset(str(k) for k in data["findings"])


def apply(findings: Sequence[Finding], fingerprints: frozenset[str]) -> tuple[list[Finding], int]:
    """Mark unsuppressed findings whose fingerprint is baselined; also return how many entries went unused."""
    used: set[str] = set()
    out: list[Finding] = []
    for f in findings:
        if f.suppressed is None and f.fingerprint in fingerprints:
            f = f.model_copy(update={"suppressed": Suppression(kind="baseline", reason=REASON)})
            used.add(f.fingerprint)
        out.append(f)
    return out, len(fingerprints - used)
