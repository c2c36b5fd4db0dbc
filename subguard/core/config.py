"""Project configuration: `[tool.subguard]` in pyproject.toml or `.subguard.yaml`, nearest wins."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ConfigError(Exception):
    """A config file that cannot be used; the message names the file and the key."""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class Waiver(_Strict):
    """A config waiver: rule + group (+ topic), with a reason and an optional expiry date."""

    rule: str
    group: str
    topic: str | None = None
    reason: str
    expires: dt.date | None = None


class EnvironmentSpec(_Strict):
    """An environment: which paths, Spring profiles and Kubernetes namespaces belong to it."""

    paths: tuple[str, ...] = ()
    profiles: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    production: bool = False


class ServiceSpec(_Strict):
    """Explicit service identity for monorepos: the path globs that make up one service."""

    paths: tuple[str, ...] = ()
    images: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()


# Where test and example code lives (`rules.code_scope`): globs over repository-relative POSIX paths.
DEFAULT_TEST_PATHS = (
    "**/src/test/**",
    "**/src/*Test/**",
    "test/**",
    "tests/**",
    "**/test/**",
    "**/tests/**",
    "**/testing/**",
    "**/test_*.py",
    "**/*_test.py",
    "**/conftest.py",
    "**/*Test.java",
    "**/*Tests.java",
    "**/*IT.java",
    "**/*TestCase.java",
)
# repositories that are samples as a whole (matched against the repository's name: its folder, or the
# audit's repository name): a vendor's "rocketmq-demo", a "springcloud-rocketmq-example", a course's or
# a book's "rocketmq-learning", "rocketmq-practice", "rocketmq_study", "learn-rocketmq"
DEFAULT_EXAMPLE_REPOS = (
    "demo",
    "demos",
    "example",
    "examples",
    "sample",
    "samples",
    "*-demo",
    "*_demo",
    "*-demos",
    "*-example",
    "*_example",
    "*-examples",
    "*-sample",
    "*-samples",
    "*-learning",
    "*-tutorial",
    "*-tutorials",
    "*-labs",
    "*_labs",
    "*-practice",
    "*-study",
    "*_study",
    "learn-*",
    "demo-*",
    "example-*",
    "sample-*",
)
DEFAULT_EXAMPLE_PATHS = (
    "example/**",
    "examples/**",
    "sample/**",
    "samples/**",
    "demo/**",
    "demos/**",
    "**/example/**",
    "**/examples/**",
    "**/sample/**",
    "**/samples/**",
    "**/demo/**",
    "**/demos/**",
    "**/*-example/**",
    "**/*-examples/**",
    "**/*-sample/**",
    "**/*-samples/**",
    "**/*-demo/**",
    "**/*_example/**",
    "**/*_demo/**",
)


class Config(_Strict):
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: str = Field(default="error", alias="fail-on")
    policies: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_file_size: int = Field(default=2 * 1024 * 1024, alias="max-file-size")
    parse_timeout: float = Field(default=10.0, alias="parse-timeout")  # seconds per file parse (subguard.core.limits)
    jobs: int = Field(
        default=0, ge=0
    )  # worker processes for per-file parses; 0 = one per core (subguard.scan.parallel)
    baseline: str | None = None
    waivers: tuple[Waiver, ...] = ()
    no_inline_waivers: tuple[str, ...] = Field(default=(), alias="no-inline-waivers")
    environments: dict[str, EnvironmentSpec] = {}
    services: dict[str, ServiceSpec] = {}
    topic_environment_patterns: dict[str, str] = Field(default={}, alias="topic-environment-patterns")
    cache_dir: str | None = Field(default=None, alias="cache-dir")
    simulate: bool = True
    show_notes: bool = Field(default=False, alias="show-notes")  # text and GitHub output list notes (else one line)
    test_paths: tuple[str, ...] = Field(default=DEFAULT_TEST_PATHS, alias="test-paths")
    example_paths: tuple[str, ...] = Field(default=DEFAULT_EXAMPLE_PATHS, alias="example-paths")
    example_repos: tuple[str, ...] = Field(default=DEFAULT_EXAMPLE_REPOS, alias="example-repos")
    test_code: Literal["report", "fail", "ignore"] = Field(default="report", alias="test-code")
    test_notes: bool = Field(default=False, alias="test-notes")  # diagnostic notes in test code
    # example code: each sample (its module, else its folder) is judged apart (rules.code_scope.sample_of)
    samples_apart: bool = Field(default=True, alias="samples-apart")
    base: str | None = None  # `check --base`: the git revision the change is judged against (SG6xx)
    # `check --org-map`: the audit's org map (relative to this config file), its age in days past which a
    # check warns (0: never), and this repository's name as the audit names it (default: the scan root's folder)
    org_map: str | None = Field(default=None, alias="org-map")
    org_map_max_age: int = Field(default=7, ge=0, alias="org-map-max-age")
    repo: str | None = None
    # where this config was read from (not a user key)
    source: str | None = Field(default=None, exclude=True)


def _normalise(data: dict[str, Any]) -> dict[str, Any]:
    """Accept both kebab-case and snake_case keys at the top level."""
    return {k.replace("_", "-") if k.replace("_", "-") in _ALIASES else k: v for k, v in data.items()}


_ALIASES = {
    "fail-on",
    "max-file-size",
    "parse-timeout",
    "no-inline-waivers",
    "topic-environment-patterns",
    "cache-dir",
    "show-notes",
    "test-paths",
    "example-paths",
    "example-repos",
    "test-code",
    "test-notes",
    "samples-apart",
    "org-map",
    "org-map-max-age",
}


def parse_config(data: Any, source: str) -> Config:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: subguard config must be a mapping, got {type(data).__name__}")
    try:
        return Config.model_validate({**_normalise(data), "source": source})
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"{source}: invalid config key '{key}': {err['msg']}") from None


def load_file(path: Path) -> Config:
    """Load one config file (pyproject.toml's [tool.subguard] or a YAML file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from None
    if path.name == "pyproject.toml":
        try:
            data = tomllib.loads(text).get("tool", {}).get("subguard", {})
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: invalid TOML: {exc}") from None
        return parse_config(data, str(path))
    from ruamel.yaml.error import YAMLError

    from subguard.core.yamlsafe import safe_yaml

    try:
        data = safe_yaml("safe").load(text)
    except (YAMLError, ValueError, TypeError, RecursionError) as exc:
        raise ConfigError(f"{path}: invalid YAML: {exc}".splitlines()[0]) from None
    return parse_config(data, str(path))


def find_config(start: Path) -> Path | None:
    """Nearest `.subguard.yaml` or pyproject.toml with a [tool.subguard] table, walking up."""
    here = start.resolve()
    if here.is_file():
        here = here.parent
    for folder in (here, *here.parents):
        for name in (".subguard.yaml", ".subguard.yml"):
            if (folder / name).is_file():
                return folder / name
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                if (
                    "tool" in (data := tomllib.loads(pyproject.read_text(encoding="utf-8")))
                    and "subguard" in data["tool"]
                ):
                    return pyproject
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
        if (folder / ".git").exists():
            break
    return None


def config_lookups(start: Path) -> list[Path]:
    """Every path `find_config` may look at from `start` (present or not): what a memoised run
    depends on, since a config file appearing in one of them changes the run."""
    here = start.resolve()
    if here.is_file():
        here = here.parent
    out: list[Path] = []
    for folder in (here, *here.parents):
        out += [folder / ".subguard.yaml", folder / ".subguard.yml", folder / "pyproject.toml", folder / ".git"]
        if (folder / ".git").exists():
            break
    return out


def load_config(explicit: Path | None, start: Path) -> Config:
    """The explicit file if given, else the nearest one, else defaults."""
    path = explicit if explicit is not None else find_config(start)
    if path is None:
        return Config()
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    return load_file(path)
