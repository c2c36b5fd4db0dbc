"""JVM option parsing: `-Dkey=value` tokens from command lines, `JAVA_OPTS`-style env values, args lists.

Pure functions over strings. Shell quoting is honoured (`shlex`); a string shlex cannot split is
split on whitespace instead, so a stray quote never loses the other options.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence

# Environment variables the JVM (or the usual launch scripts) read options from.
JVM_ENV_VARS = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "JAVA_OPTS")

OFFSET_DIR = "rocketmq.client.localOffsetStoreDir"
USER_HOME = "user.home"
CLIENT_NAME = "rocketmq.client.name"
NAMESRV = "rocketmq.namesrv.addr"

_D_RE = re.compile(r"^-D([A-Za-z0-9_.\-]+)(?:=(.*))?$", re.DOTALL)
# `$(VAR)` (Kubernetes) and `${VAR}` / `$VAR` (shell, compose) references.
_REF_RE = re.compile(
    r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:[:-][^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)"
)


def split_words(text: str) -> list[str]:
    """Split a command line as a POSIX shell would; fall back to whitespace on bad quoting."""
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError:
        return text.split()


def d_options(words: Iterable[str]) -> list[tuple[str, str]]:
    """`-Dkey=value` pairs in order; nested shell strings (`sh -c "java -D..."`) are split again."""
    out: list[tuple[str, str]] = []
    for word in words:
        match = _D_RE.match(word)
        if match:
            out.append((match.group(1), match.group(2) or ""))
        elif "-D" in word and (" " in word or "\n" in word):
            out.extend(d_options(split_words(word)))
    return out


def options_from_text(text: str) -> list[tuple[str, str]]:
    """`-D` options of one command-line string (an env value, a shell-form CMD)."""
    return d_options(split_words(text))


def options_from_env(env: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """`-D` options carried by JVM option variables, in the order the JVM applies them.

    `JAVA_TOOL_OPTIONS` is read first and `JDK_JAVA_OPTIONS` next; `JAVA_OPTS` is expanded by
    launch scripts onto the command line, so it comes last (command line wins).
    """
    values = dict(env)
    out: list[tuple[str, str]] = []
    for name in JVM_ENV_VARS:
        if name in values:
            out.extend(options_from_text(values[name]))
    return out


def references(text: str) -> list[str]:
    """Names of the variables a string refers to (`$(X)`, `${X}`, `$X`), in order."""
    return [next(g for g in m.groups() if g) for m in _REF_RE.finditer(text)]


def expand(text: str, env: Sequence[tuple[str, str]]) -> str:
    """Replace references to variables defined in `env` by their values; unknown ones stay as written."""
    values = dict(env)

    def repl(match: re.Match[str]) -> str:
        name = next(g for g in match.groups() if g)
        return values.get(name, match.group(0))

    return _REF_RE.sub(repl, text)
