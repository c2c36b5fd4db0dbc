"""Dockerfiles -> one `Runtime` for the final stage: ENV, ENTRYPOINT/CMD words, VOLUME, USER.

A Dockerfile says what the image carries, not how it is run: `VOLUME` gives an anonymous volume
that a new container does not inherit, so it is recorded as not persistent.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field, replace

from subguard.core.model import Mount
from subguard.deploy import jvm_options as jvm
from subguard.deploy.manifest_values import Runtime
from subguard.deploy.service import is_dockerfile_path

__all__ = ["is_dockerfile_path", "parse"]

_INSTR_RE = re.compile(r"^\s*([A-Za-z]+)\s*(.*)$", re.DOTALL)


@dataclass(frozen=True)
class _Stage:
    name: str = ""
    line: int = 1
    env: tuple[tuple[str, str], ...] = ()
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    volumes: tuple[str, ...] = ()
    user: str = ""
    notes: tuple[str, ...] = field(default=())


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, instruction text) with continuations joined and comments dropped."""
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    start = 0
    for no, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not buf and (not stripped or stripped.startswith("#")):
            continue
        if buf and stripped.startswith("#"):
            continue
        if not buf:
            start = no
        if raw.rstrip().endswith("\\"):
            buf.append(raw.rstrip()[:-1])
            continue
        buf.append(raw)
        out.append((start, " ".join(b.strip() for b in buf)))
        buf = []
    if buf:
        out.append((start, " ".join(b.strip() for b in buf)))
    return out


def _exec_or_shell(arg: str, env: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    text = arg.strip()
    if text.startswith("["):
        try:
            items = json.loads(text)
        except ValueError:
            items = None
        if isinstance(items, list) and all(isinstance(i, str) for i in items):
            return tuple(jvm.expand(i, env) for i in items)
    return tuple(jvm.split_words(jvm.expand(text, env)))


def _env_pairs(arg: str) -> list[tuple[str, str]]:
    words = jvm.split_words(arg)
    if words and "=" not in words[0]:  # legacy `ENV KEY value with spaces`
        key, _, rest = arg.strip().partition(" ")
        return [(key, rest.strip())]
    return [(k, v) for w in words for k, _, v in [w.partition("=")]]


def parse(text: str, path: str) -> Runtime | None:
    """The final stage of a Dockerfile as a Runtime; None when it has no FROM."""
    stages: dict[str, _Stage] = {}
    cur: _Stage | None = None
    for line, instr in logical_lines(text):
        m = _INSTR_RE.match(instr)
        if not m:
            continue
        op, arg = m.group(1).upper(), m.group(2).strip()
        if op == "FROM":
            words = arg.split()
            base = next((w for w in words if not w.startswith("--")), "")
            alias = words[-1] if len(words) >= 3 and words[-2].upper() == "AS" else ""
            parent = stages.get(base.lower())
            cur = replace(parent, name=alias, line=line) if parent else _Stage(name=alias, line=line)
            if alias:
                stages[alias.lower()] = cur
            continue
        if cur is None:
            continue
        if op == "ENV":
            env = dict(cur.env)
            for k, v in _env_pairs(arg):
                env[k] = jvm.expand(v, tuple(env.items()))
            cur = replace(cur, env=tuple(env.items()))
        elif op == "ENTRYPOINT":
            cur = replace(cur, entrypoint=_exec_or_shell(arg, cur.env), cmd=())
        elif op == "CMD":
            cur = replace(cur, cmd=_exec_or_shell(arg, cur.env))
        elif op == "VOLUME":
            vols = _exec_or_shell(arg, cur.env)
            cur = replace(cur, volumes=cur.volumes + vols)
        elif op == "USER":
            cur = replace(cur, user=arg.split(":", 1)[0])
        if cur.name:
            stages[cur.name.lower()] = cur
    if cur is None:
        return None
    notes = (
        ()
        if not cur.user or cur.user in ("root", "0")
        else (f"runs as user {cur.user}; user.home depends on that user",)
    )
    folder = posixpath.basename(posixpath.dirname(path))
    return Runtime(
        kind="Dockerfile",
        name=folder or posixpath.basename(path),
        path=path,
        line=cur.line,
        env=cur.env,
        words=cur.entrypoint + cur.cmd,
        mounts=tuple(Mount(path=v, volume_kind="image-volume", persistent=False) for v in cur.volumes),
        notes=notes,
    )
