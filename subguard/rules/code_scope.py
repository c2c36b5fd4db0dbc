"""Test and example code, and the placeholder group names samples use on purpose.

A finding whose every location (the finding's own and each related one) lies in test or example
code is marked so in every format (`[test code]`, `[example code]` after the message, and
`code` in JSON and SARIF), and the `test-code` setting decides what it does to the run:

- `report` (default): shown, marked, never fails the run;
- `fail`: counts like any other finding;
- `ignore`: dropped.

A group finding about a placeholder group name (`please_rename_unique_group_name`,
`yourConsumerGroup`, `CID_XXX`, ...) is marked `[placeholder group name]` and treated the same way:
it is what a sample asks its reader to rename, not a production conflict. A sample program runs on
its own (`samples-apart`, on by default): example-code consumers are members of a group only with
those of the same sample (`sample_of`), never with other samples or production code. Diagnostic notes (SG902,
...) in test code are dropped unless `test-notes` is on. Paths are matched with the globs of
`test-paths` and `example-paths` (the `exclude` setting's glob semantics: `**` spans folders, `*` one name, a folder names what is below it).
"""

from __future__ import annotations

import fnmatch
import functools
import posixpath
import re
from collections.abc import Callable, Sequence

from subguard.core.config import Config
from subguard.core.inventory import group_key, group_name
from subguard.core.model import CODE_SCOPE, SAMPLE, Consumer, Finding, Severity
from subguard.scan.globs import matcher as globs_matcher

TAGS = {"test": "test code", "example": "example code", "placeholder": "placeholder group name"}
PLACEHOLDER_GROUPS = re.compile(
    r"please[_-]?rename[_-]?unique[_-]?group[_-]?name.*|your[_-]?(?:consumer[_-]?)?group(?:[_-]?name)?|"
    r"(?:CID|GID|GROUP)[_-]?X{2,}.*|group[_-]?name[_-]?here|<[^>]*group[^>]*>",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=64)
def _matcher(globs: tuple[str, ...]) -> Callable[[str], str | None]:
    """One matcher for a tuple of path globs, with the `exclude` setting's semantics (`scan.globs`)."""
    return globs_matcher(globs) or (lambda path: None)


_SOURCE_ROOT = re.compile(r"(?:^|/)src/(?:main|test|it|integrationTest)/[^/]+/")


def _layout(path: str) -> str:
    """The path with the organisation's part of a JVM package dropped: under `src/main/java/`, the
    first three package folders are a reverse domain and a project (`com/example/demo`, Spring
    Initializr's default, names no example module), so only the module folders, the deeper package
    folders (`org/apache/rocketmq/example/` keeps `example/`) and the file name are matched."""
    m = _SOURCE_ROOT.search(path)
    if m is None:
        return path
    folders = path[m.end() :].split("/")[:-1]
    return path[: m.end()] + "".join(f"{f}/" for f in folders[3:]) + path.rsplit("/", 1)[-1]


def code_kind(path: str, config: Config, repo: str = "") -> str:
    """ "test", "example" or "" for a repository-relative POSIX path (of repository `repo`, whose
    name may say that it is a sample as a whole: `example-repos`)."""
    return _code_kind(path, repo, config.test_paths, config.example_paths, config.example_repos)


@functools.lru_cache(maxsize=65536)
def _code_kind(
    path: str, repo: str, test_paths: tuple[str, ...], example_paths: tuple[str, ...], example_repos: tuple[str, ...]
) -> str:
    """`code_kind` by value: a run asks it for every member and every location of every finding."""
    layout = _layout(path)
    if _matcher(test_paths)(layout):
        return "test"
    if _matcher(example_paths)(layout):
        return "example"
    if repo and _example_repo(repo, example_repos):
        return "example"
    return ""


@functools.lru_cache(maxsize=256)
def _example_repo(repo: str, example_repos: tuple[str, ...]) -> bool:
    """Whether a repository's name says it is a sample as a whole (asked once per repository, not per path)."""
    return any(fnmatch.fnmatchcase(repo.lower(), p) for p in example_repos)


def sample_of(c: Consumer, config: Config) -> str:
    """The sample an example-code consumer belongs to ("" for other code, or `samples-apart` off).
    Sample trees hold programs meant to run one at a time (alternative demo apps, version variants,
    one script per feature), so two samples are never one group: a sample is the consumer's module
    (a service below the repository root); outside every module, the root's Maven/Gradle layout
    (`src/...`) is one sample and any other file's folder is one (a folder of standalone mains)."""
    if not config.samples_apart:
        return ""
    repo = c.repo or c.location.repo
    path = c.location.path
    if code_kind(path, config, repo) != "example":
        return ""
    if c.service and c.service != repo:
        return c.service
    return "." if path.startswith("src/") else posixpath.dirname(path) or "."


def member_key(c: Consumer, config: Config) -> str | None:
    """The group map key of a consumer (`group_key`: the name the broker sees, plus its sample);
    None when its group is not known."""
    name = group_name(c)
    return None if name is None else group_key(name, sample_of(c, config))


def finding_key(f: Finding) -> str:
    """The group map key a group finding is about: its group, plus the sample it is confined to."""
    return group_key(f.group, str(dict(f.properties).get(SAMPLE) or ""))


def _kind(f: Finding, config: Config) -> str:
    kinds = {code_kind(loc.path, config, loc.repo) for loc in (f.location, *(r.location for r in f.related))}
    if kinds <= {"test", "example"} and "" not in kinds:
        return "test" if "test" in kinds else "example"
    if f.group and f.related and PLACEHOLDER_GROUPS.fullmatch(f.group.rpartition("%")[2]):
        return "placeholder"
    return ""


def mark(
    findings: Sequence[Finding], config: Config, diagnostic: frozenset[str], topology: frozenset[str] = frozenset()
) -> list[Finding]:
    """Mark findings in test or example code and about placeholder groups; drop what the settings
    drop (`test-code: ignore`; diagnostic notes in test code unless `test-notes`) and what cannot
    apply: a deployment-topology rule (`roles: [topology]`) about code that is never deployed."""
    out: list[Finding] = []
    for f in findings:
        kind = _kind(f, config)
        if not kind:
            out.append(f)
        elif f.rule in topology and kind != "placeholder":
            continue
        elif f.rule in diagnostic and f.severity is Severity.NOTE and kind != "placeholder" and not config.test_notes:
            continue
        elif config.test_code != "ignore":
            out.append(
                f.model_copy(
                    update={
                        "message": f"{f.message} [{TAGS[kind]}]",
                        "properties": (*f.properties, (CODE_SCOPE, kind)),
                    }
                )
            )
    return out


def counts(f: Finding, config: Config) -> bool:
    """Whether a finding may fail the run: not when it is marked and `test-code` is `report`."""
    return config.test_code == "fail" or CODE_SCOPE not in dict(f.properties)
