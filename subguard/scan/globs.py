"""The `exclude` setting: path globs whose files a scan leaves unread.

Semantics (README "Configuration"):

- A pattern is matched against a file's POSIX path relative to the folder of the config file that
  sets it (for `[tool.subguard]` or `.subguard.yaml` at a repository's top: the repository root). A
  scan root outside that folder (a `--config` from elsewhere) matches paths relative to the root; the
  audit matches paths relative to each repository's root.
- `*` is any run of characters within one name, `?` one character within a name, `**` any run of
  characters across folders, and `**/` zero or more folders (`**/generated/**` is a `generated`
  folder at any depth). Everything else is literal; the match is case-sensitive and whole-path.
- A pattern that names a folder excludes everything below it: `legacy`, `legacy/` and `legacy/**`
  are the same. A leading `/` or `./` is dropped (patterns are anchored anyway). A pattern without
  a `/` is still anchored: `*.py` is a Python file at the top; `**/*.py` is one at any depth.

An excluded file is never read (nor stat-ed), is invisible to the extractors, and is counted as
skipped with the reason "excluded by config (exclude: PATTERN)".

Standard library only (and `re` imported only when there are patterns): the run memo's replay
(`subguard.scan.runmemo`) matches with it.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

REASON = "excluded by config (exclude: {})"


def reason(pattern: str) -> str:
    return REASON.format(pattern)


def _regex(glob: str) -> str:
    """The whole-path regex of one pattern, folder semantics included."""
    body = glob.strip()
    while body.startswith(("./", "/")):
        body = body[2:] if body.startswith("./") else body[1:]
    body = body.rstrip("/")
    if body.endswith("/**"):
        body = body[:-3]
    out, i = "", 0
    while i < len(body):
        if body.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif body.startswith("**", i):
            out, i = out + ".*", i + 2
        elif body[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif body[i] == "?":
            out, i = out + "[^/]", i + 1
        else:  # only ASCII punctuation is escaped: a backslash before a letter is an error in Java
            out, i = (
                out + ("\\" + body[i] if body[i].isascii() and not body[i].isalnum() and body[i] != "_" else body[i]),
                i + 1,
            )
    return f"{out}(?:/.*)?" if out else ".*"


def matcher(patterns: Sequence[str], prefix: str = "") -> Callable[[str], str | None] | None:
    """A function from a root-relative path to the first pattern that excludes it (None: kept);
    None when there are no patterns. `prefix` ("services/a/") is the root's path relative to the
    config file's folder, put in front of every path before matching."""
    pats = [p for p in patterns if p and p.strip()]
    if not pats:
        return None
    import re

    compiled = re.compile("|".join(f"(?P<g{n}>{_regex(p)})" for n, p in enumerate(pats)), re.DOTALL)

    def match(rel: str) -> str | None:
        m = compiled.fullmatch(prefix + rel)
        return pats[int(m.lastgroup[1:])] if m is not None and m.lastgroup else None

    return match


def root_prefix(folder: str, config_dir: str | None) -> str:
    """ "rel/path/" of the scan folder `folder` inside `config_dir` ("" for the folder itself, or when
    it is not inside: patterns are then matched relative to the folder)."""
    if not config_dir:
        return ""
    for a, b in (
        (os.path.abspath(folder), os.path.abspath(config_dir)),
        (os.path.realpath(folder), os.path.realpath(config_dir)),
    ):
        if a == b:
            return ""
        if a.startswith(b.rstrip("/") + "/"):
            return a[len(b.rstrip("/")) + 1 :].replace(os.sep, "/") + "/"
    return ""
