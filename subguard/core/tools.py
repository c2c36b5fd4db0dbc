"""External programs a scan uses when present: the `helm` binary that renders charts.

Standard library only (`os`): the run memo keys its entries on `helm_stamp()` without loading more.

`SUBGUARD_HELM` chooses: unset, the first `helm` on an absolute `PATH` entry (a relative entry such
as `.` is never searched: a scanned repo's own `helm` must not run); a path, that binary; `off`
(or `0`, `no`, `none`, `false`, empty), no rendering.
"""

from __future__ import annotations

import os

HELM_ENV = "SUBGUARD_HELM"
_OFF = frozenset({"", "0", "off", "no", "none", "false"})


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def helm_binary() -> str | None:
    """The helm binary to render charts with, or None (not installed, or turned off)."""
    chosen = os.environ.get(HELM_ENV)
    if chosen is not None:
        if chosen.strip().lower() in _OFF:
            return None
        return chosen if _executable(chosen) else None
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if os.path.isabs(folder) and _executable(candidate := os.path.join(folder, "helm")):
            return candidate
    return None


def helm_stamp() -> str:
    """Which helm a scan would use, for cache keys: a scan result read without helm is stale once
    helm is installed (and the other way round)."""
    path = helm_binary()
    if path is None:
        return "helm:none"
    try:
        st = os.stat(path)
    except OSError:
        return "helm:none"
    return f"helm:{os.path.realpath(path)}:{st.st_size}:{st.st_mtime_ns}"
