"""Policy files: one YAML file per rule, schema-checked, loaded with the ruamel safe loader.

A policy names its subjects with `scope` and optionally `for_each` (a fan-out of the scope, e.g.
`group` + `for_each: topic` gives one subject per (group, topic)); `subguard.rules.subjects.KINDS`
lists every (scope, for_each) pair and the fields it offers. `condition` is a tree over those
fields (`subguard.rules.conditions`); no condition means every subject matches. `variants` names the
subject's disagreement dimension whose members become the finding's location and related
locations and the `{variants}` text. `severity_from` names a field whose value (error / warning /
note) overrides `severity` per finding. `message` is a `str.format` template over the fields.

Built-in policies live in `policies/` (packaged as `subguard/rules/policies`); users add directories
with `--policies DIR` or config `policies = [...]`. Any problem is a `PolicyError` whose message
starts with the file and the key.
"""

from __future__ import annotations

import functools
import hashlib
import re
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from subguard.core.cache import code_stamp
from subguard.core.model import RuleDoc, Severity
from subguard.rules.conditions import Condition, leaves

BUILTIN_DIR = Path(__file__).resolve().parent / "policies"
# change: judged between a base revision and the head (`check --base`, `subguard.rules.change`), in code
Scope = Literal["subscription", "consumer", "group", "deployment", "consumer+deployment", "evidence", "change", "tool"]
# consistency: a group rule the simulator's self-check (SG905) must agree with;
# diagnostic: a finding about what subguard itself could not read or judge (a tool notification in SARIF,
# summarised in one line by text and GitHub output)
# topology: a rule about how services are deployed (services or environments sharing a group, workloads):
# test and example code is not deployed, so a finding of it whose members all live there is dropped
Role = Literal["consistency", "diagnostic", "topology"]
FixSafety = Literal["none", "safe", "unsafe", "mixed"]  # mixed: safe or unsafe by case, the docs say which
_IMPLEMENTED_BY = re.compile(r"^subguard(?:\.[a-z_][a-z0-9_]*)+:[A-Za-z_][A-Za-z0-9_]*$")
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_TAGS = {"leaf", "all", "any", "not"}


class PolicyError(Exception):
    """A policy file that cannot be used: "<file>: <key>: <problem>"."""


class PolicyDocs(BaseModel):
    """The fixed documentation sections (`subguard explain`, SARIF help)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    summary: str = Field(min_length=1)
    what: str = Field(min_length=1)
    why: str = ""
    example: str = ""
    instead: str = ""
    references: tuple[str, ...] = ()


class Policy(BaseModel):
    """The schema of one `policies/*.yaml` file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    severity: Severity
    scope: Scope
    for_each: str | None = None
    message: str
    condition: Condition | None = None
    variants: str | None = None
    severity_from: str | None = None
    roles: tuple[Role, ...] = ()
    links: tuple[str, ...] = ()  # rules whose findings this rule's findings cite (SG506 -> SG301, SG302)
    fix: FixSafety = "none"
    implemented_by: str | None = None  # "module:function" of a rule implemented in code (no `condition`)
    docs: PolicyDocs
    _source: str = PrivateAttr(default="")

    @property
    def source(self) -> str:
        return self._source

    @property
    def kind(self) -> str:
        """The subject kind key: `scope` or `scope/for_each`."""
        return f"{self.scope}/{self.for_each}" if self.for_each else self.scope

    @property
    def doc(self) -> RuleDoc:
        d = self.docs
        return RuleDoc(
            id=self.id,
            name=self.name,
            severity=self.severity,
            scope=self.kind,
            summary=d.summary.strip(),
            what=d.what.strip(),
            why=d.why.strip(),
            example=d.example.rstrip(),
            instead=d.instead.rstrip(),
            references=d.references,
            source=self._source,
            fix=self.fix,
            roles=self.roles,
        )


def _loc(loc: Sequence[Any]) -> str:
    """Pydantic error location as a dotted key, without the condition union's tags."""
    out = ""
    expect_tag = False
    for part in loc:
        if expect_tag and part in _TAGS:
            expect_tag = False
            continue
        expect_tag = False
        if isinstance(part, int):
            out += f"[{part}]"
            expect_tag = out.startswith("condition")
        else:
            out += f".{part}" if out else str(part)
            expect_tag = part in ("condition", "not")
    return out or "(top level)"


def _read_yaml(path: Path) -> Any:
    from ruamel.yaml.error import YAMLError

    from subguard.core.yamlsafe import safe_yaml

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(f"{path}: (file): cannot read: {exc}") from None
    try:
        return safe_yaml("safe").load(text)  # data only; depth and alias-expansion limits
    except (ValueError, TypeError, RecursionError) as exc:  # scalar constructors: 2001-13-45, a 5000-digit int
        raise PolicyError(
            f"{path}: (yaml): invalid YAML value: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        ) from None
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(yaml)"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise PolicyError(f"{path}: {where}: invalid YAML: {problem}") from None


def _placeholders(template: str) -> set[str]:
    names: set[str] = set()
    for _, name, spec, _ in string.Formatter().parse(template):
        if name is not None:
            if not name or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
                raise ValueError(f"placeholder {{{name}}} must be a plain field name")
            if spec and re.search(r"[{}]|\d{4,}", spec):  # {group:>999999999} would allocate a GB per finding
                raise ValueError(f"placeholder {{{name}:{spec}}}: format spec must be short and plain")
            names.add(name)
    return names


# the fields a change rule's message may name (filled by `subguard.rules.change`)
CHANGE_FIELDS = frozenset({"group", "change", "workloads", "base", "assumed", "old_group", "start"})


def _check_change(policy: Policy, path: Path) -> None:
    if policy.condition is not None or policy.for_each or policy.variants:
        raise PolicyError(
            f"{path}: condition: change policies are judged in code (implemented_by) and take no condition/for_each/variants"
        )
    try:
        unknown = _placeholders(policy.message) - CHANGE_FIELDS
    except ValueError as exc:
        raise PolicyError(f"{path}: message: {exc}") from None
    if unknown:
        raise PolicyError(
            f"{path}: message: unknown placeholder {{{min(unknown)}}} (known: {', '.join(sorted(CHANGE_FIELDS))})"
        )


def _check_fields(policy: Policy, path: Path) -> None:
    """Fields, variants and placeholders must exist for the policy's subject kind (when registered)."""
    from subguard.rules.subjects import KINDS, TOOL_FIELDS, kind_spec

    if policy.scope == "tool":
        if policy.condition is not None or policy.for_each or policy.variants:
            raise PolicyError(
                f"{path}: condition: tool policies are emitted by subguard itself and take no condition/for_each/variants"
            )
        known = TOOL_FIELDS.get(policy.id)
        if known is not None:
            try:
                unknown = _placeholders(policy.message) - known
            except ValueError as exc:
                raise PolicyError(f"{path}: message: {exc}") from None
            if unknown:
                raise PolicyError(
                    f"{path}: message: unknown placeholder {{{min(unknown)}}} (known: {', '.join(sorted(known))})"
                )
        return
    if policy.scope == "change":
        _check_change(policy, path)
        return
    if policy.kind not in KINDS:
        scopes = sorted(k for k in KINDS if k.split("/")[0] == policy.scope)
        if policy.scope in ("deployment", "consumer+deployment", "evidence") and not scopes:
            return  # subjects provided by a later module; checked when it registers
        raise PolicyError(f"{path}: for_each: no subjects '{policy.kind}' (known: {', '.join(sorted(KINDS))})")
    spec = kind_spec(policy.kind)
    for leaf in leaves(policy.condition):
        if leaf.field not in spec.fields:
            raise PolicyError(
                f"{path}: condition: unknown field '{leaf.field}' for {policy.kind} (known: {', '.join(sorted(spec.fields))})"
            )
    if policy.variants is not None and policy.variants not in spec.variants:
        raise PolicyError(
            f"{path}: variants: unknown variants '{policy.variants}' for {policy.kind} (known: {', '.join(sorted(spec.variants)) or 'none'})"
        )
    if policy.severity_from is not None and policy.severity_from not in spec.fields:
        raise PolicyError(f"{path}: severity_from: unknown field '{policy.severity_from}' for {policy.kind}")
    try:
        names = _placeholders(policy.message)
    except ValueError as exc:
        raise PolicyError(f"{path}: message: {exc}") from None
    allowed = set(spec.fields) | {"variants", "rule", "name"}
    unknown = names - allowed
    if unknown:
        raise PolicyError(f"{path}: message: unknown placeholder {{{min(unknown)}}} for {policy.kind}")
    if "variants" in names and policy.variants is None:
        raise PolicyError(f"{path}: message: {{variants}} needs a `variants:` key")


def load_policy(path: Path) -> Policy:
    """Parse and check one policy file."""
    data = _read_yaml(path)
    if not isinstance(data, dict):
        raise PolicyError(f"{path}: (top level): a policy must be a mapping, got {type(data).__name__}")
    try:
        policy = Policy.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise PolicyError(f"{path}: {_loc(err['loc'])}: {err['msg']}") from None
    if not _ID.match(policy.id):
        raise PolicyError(f"{path}: id: '{policy.id}' must be letters and digits, e.g. SG102 or ACME001")
    if not _NAME.match(policy.name):
        raise PolicyError(f"{path}: name: '{policy.name}' must be kebab-case, e.g. group-tag-set-mismatch")
    expected = f"{policy.id}-{policy.name}"
    if path.stem != expected:
        raise PolicyError(
            f"{path}: id: file name must be '{expected}{path.suffix}' (id '{policy.id}', name '{policy.name}')"
        )
    if policy.implemented_by is not None and not _IMPLEMENTED_BY.match(policy.implemented_by):
        raise PolicyError(
            f"{path}: implemented_by: '{policy.implemented_by}' must name a subguard function, e.g. subguard.rules.selfcheck:finding"
        )
    if policy.condition is not None and policy.implemented_by is not None:
        raise PolicyError(f"{path}: implemented_by: a rule with a condition is implemented by its condition")
    policy._source = str(path)
    _check_fields(policy, path)
    return policy


def _files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        raise PolicyError(f"{folder}: (directory): policies directory not found")
    return sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")])


def policy_files(extra_dirs: Sequence[Path] = ()) -> list[Path]:
    """Every policy file of a run: the built-in ones, then each extra directory's, in load order."""
    return [path for folder in (BUILTIN_DIR, *[Path(d) for d in extra_dirs]) for path in _files(folder)]


def _code_stamp() -> str:
    """Size and mtime of the code that parses policies: a policy parsed by other code is not reused."""
    pkg = Path(__file__).resolve().parent.parent
    return code_stamp(pkg / "rules", pkg / "core", pkg / "rocketmq", pkg / "deploy")


def policy_digest(files: Sequence[Path]) -> str:
    """A hash of the policy set: every file's path and bytes, plus the subguard version. It keys the
    parsed-policy cache and, passed to the scan as `cache_key`, invalidates the content cache."""
    from subguard import __version__

    h = hashlib.sha256(__version__.encode())
    for path in files:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise PolicyError(f"{path}: (file): cannot read: {exc}") from None
        h.update(b"\0" + str(path).encode("utf-8", "surrogateescape") + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def _cache_file(digest: str) -> Path:
    from subguard.core.cache import user_cache_dir

    return user_cache_dir() / "policies" / f"{digest[:32]}.pickle"


def load_policy_set(extra_dirs: Sequence[Path] = ()) -> tuple[list[Policy], str]:
    """`load_policies` plus the policy set's digest. The parsed set is cached in the user's cache
    directory (signed like the content cache, keyed by the files' bytes and subguard's code), because
    parsing ~30 YAML files with the pure-Python loader dominates a small check."""
    from subguard.core.cache import read_signed, write_signed

    files = policy_files(extra_dirs)
    digest = policy_digest(files)
    key = hashlib.sha256(f"{digest}\0{_code_stamp()}".encode()).hexdigest()
    cache_file = _cache_file(key)
    cached = read_signed(cache_file)
    if isinstance(cached, list) and all(isinstance(p, Policy) for p in cached):
        return cached, digest
    seen: dict[str, Policy] = {}
    for path in files:
        policy = load_policy(path)
        if policy.id in seen:
            raise PolicyError(f"{path}: id: duplicate id '{policy.id}' (also in {seen[policy.id].source})")
        seen[policy.id] = policy
    policies = [seen[k] for k in sorted(seen)]
    try:
        write_signed(cache_file, policies)
    except Exception:  # noqa: BLE001, S110 - the cache is an optimisation: a read-only home still works
        pass
    return policies, digest


def load_policies(extra_dirs: Sequence[Path] = ()) -> list[Policy]:
    """Built-in policies plus every `*.yaml` in `extra_dirs`, sorted by id; ids must be unique."""
    return load_policy_set(extra_dirs)[0]


def policy_dirs(config_policies: Sequence[str], config_source: str | None, cli_dirs: Sequence[str] = ()) -> list[Path]:
    """User policy directories: config entries (relative to the config file) then `--policies`."""
    base = Path(config_source).parent if config_source else Path.cwd()
    out = [Path(p) if Path(p).is_absolute() else base / p for p in config_policies]
    return out + [Path(p) for p in cli_dirs]


def rule_docs(policies: Sequence[Policy]) -> dict[str, RuleDoc]:
    """Rule id -> its docs, for reporters and `explain`."""
    return {p.id: p.doc for p in policies}


def with_role(policies: Sequence[Policy], role: Role) -> frozenset[str]:
    """The ids of the policies that declare `role`."""
    return frozenset(p.id for p in policies if role in p.roles)


def builtin(rule: str) -> Policy:
    """One built-in policy by id (the tool rules' severity and message when a caller passed none)."""
    return _builtin_by_id()[rule]


@functools.lru_cache(maxsize=1)
def _builtin_by_id() -> dict[str, Policy]:
    return {p.id: p for p in load_policies()}
