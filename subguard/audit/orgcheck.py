"""`check --org-map`: judge the checked repository's groups with every other repository's members.

The map (`subguard.audit.orgmap`, read with the standard library) gives, for each group the working
tree declares, the members the last audit found in other repositories. The checked repository's own
rows in the map are left out: its working tree replaces them (a fix in the pull request makes the
finding go away; a consumer removed in it no longer counts). The other members go to `judge()` as
extra `ScanResult`s, one per repository, with their inline waivers, so the same rules and the same
simulated impact apply as in the audit's group tasks.

What is reported: only findings that involve this repository, on this repository's line (a group
finding whose primary member sits elsewhere is moved onto this repository's first member, the other
member becoming a related location); the members from the map are cited as `repo:path:line` and
marked with the map's date by the reporters (`ReportContext.map_repos`, `map_date`).

Repository identity: the name the audit gives a repository (its folder in an organisation folder,
its inventory `name`), which `check` reads from the scan root's folder name; config `repo`
overrides it. When the map has no repository of that name but one whose rows sit at exactly this
working tree's paths in this tree's groups, that repository is taken as this one under an old name
(renamed, or checked out under another folder name), with a warning.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from subguard.audit.orgmap import MapError, OrgMap
from subguard.core.config import Config
from subguard.core.inventory import group_name
from subguard.core.members import MEMBERS, Member
from subguard.core.model import ORG_MAP, Consumer, Finding, Location, Related
from subguard.deploy.environment import with_environment
from subguard.rules import suppress
from subguard.rules.judge import BaselineStep, Describe, Judged, RuleSet, Waivers, WaiverSource, judge
from subguard.scan.extraction import ScanResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from subguard.rules.change import Change

__all__ = ["MapError", "OrgCheck", "prepare"]


@dataclass(frozen=True)
class OrgCheck:
    """A check joined with the org map: this repository's results (environment hints applied), the
    other repositories' members of its groups and their waivers, and what stderr should say."""

    path: str
    date: str
    age_days: int
    own: frozenset[str]  # repo names of this check's own locations (as scanned)
    results: tuple[ScanResult, ...]  # this repository's, with the map's environment hint applied
    others: tuple[ScanResult, ...]  # the map's members of this repository's groups, one result per repository
    waivers: tuple[suppress.InlineWaiver, ...] = ()
    warnings: tuple[str, ...] = ()
    replaced: Mapping[str, int] = field(default_factory=dict)  # map repo -> own rows replaced by the working tree

    @functools.cached_property
    def map_repos(self) -> frozenset[str]:
        return frozenset(r.repo for r in self.others)

    def ours(self, loc: Location) -> bool:
        return not loc.repo or loc.repo in self.own

    def involves(self, f: Finding) -> bool:
        return self.ours(f.location) or any(self.ours(r.location) for r in f.related)

    def judge(
        self,
        results: Sequence[ScanResult],
        rules: RuleSet,
        config: Config,
        *,
        waivers: WaiverSource | None = None,
        baseline: BaselineStep | None = None,
        describe: Describe | None = None,
        change: Change | None = None,
    ) -> Judged:
        """`rules.judge.judge` over this repository and the map's members: the same steps, findings kept
        only where they involve this repository and placed on its line before the baseline sees them.
        `results` are this check's own (the hinted copies prepared from the map stand in for them)."""
        own_results = self.results if [r.repo for r in results] == [r.repo for r in self.results] else tuple(results)

        def waiver_source(found: Sequence[Finding]) -> Waivers:
            mine = waivers([self._own_only(f) for f in found if self.involves(f)]) if waivers else Waivers()
            return Waivers((*mine.inline, *self.waivers), mine.config_locations, mine.today)

        def place(found: list[Finding]) -> tuple[list[Finding], int]:
            placed = [self.relocate(f) for f in found]
            return baseline(placed) if baseline is not None else (placed, 0)

        judged = judge(
            [*own_results, *self.others],
            rules,
            config,
            waivers=waiver_source,
            keep=self.involves,
            baseline=place,
            describe=describe,
            change=change,
        )
        # the simulator's self-check runs after `keep`: its findings are kept and placed the same way
        kept = [self.mark(self.relocate(f)) for f in judged.findings if self.involves(f)]
        return dataclasses.replace(judged, findings=kept)

    def mark(self, f: Finding) -> Finding:
        """Name the related locations that are rows of the map, with its date, for the reporters."""
        repos = tuple(sorted({r.location.repo for r in f.related if r.location.repo in self.map_repos}))
        if not repos:
            return f
        return f.model_copy(update={"properties": (*f.properties, (ORG_MAP, (("date", self.date), ("repos", repos))))})

    def _own_only(self, f: Finding) -> Finding:
        """The finding with only this repository's locations: what the on-disk waiver reader may open."""
        if self.ours(f.location):
            return f.model_copy(update={"related": tuple(r for r in f.related if self.ours(r.location))})
        mine = [r for r in f.related if self.ours(r.location)]
        return f.model_copy(update={"location": mine[0].location, "related": tuple(mine[1:])})

    def relocate(self, f: Finding) -> Finding:
        """A finding whose primary location is another repository's, moved onto this repository's first
        related location; the other member becomes related. Members keep their order otherwise."""
        if self.ours(f.location):
            return f
        index = next((i for i, r in enumerate(f.related) if self.ours(r.location)), None)
        if index is None:
            return f
        props = dict(f.properties)
        members = props.get(MEMBERS)
        old = Related(location=f.location, message=_member_text(members, f.location))
        related = (old, *f.related[:index], *f.related[index + 1 :])
        related = tuple(
            sorted(related, key=lambda r: (r.location.repo, r.location.path, r.location.line, r.location.column))
        )
        new = f.related[index].location
        if isinstance(members, tuple) and all(isinstance(m, Member) for m in members):
            first = [m for m in members if m.location == new][:1]
            props[MEMBERS] = (*first, *(m for m in members if not (first and m is first[0])))
        return f.model_copy(
            update={
                "location": new,
                "related": related,
                "properties": tuple((k, props[k]) for k, _ in f.properties),
            }
        )


def _member_text(members: object, loc: Location) -> str:
    if isinstance(members, tuple):
        for m in members:
            if isinstance(m, Member) and m.location == loc:
                if m.message:
                    return m.message
                if m.topic is not None:
                    return (
                        f"subscribes '{m.topic}' with {m.expression!r}"
                        if m.expression is not None
                        else f"subscribes '{m.topic}'"
                    )
    return ""


def _hinted(c: Consumer, config: Config, env_hint: str) -> Consumer:
    """The consumer as the audit judges it in a group: classified by its own repository's config, the
    inventory's environment hint filling an environment the code names none of."""
    c = with_environment(c, config)
    return c.model_copy(update={"environment": env_hint}) if env_hint and not c.environment else c


def prepare(path: str, results: Sequence[ScanResult], config: Config, warn_after_days: int | None) -> OrgCheck:
    """Open the map and gather the other repositories' members of every group `results` declare.
    MapError (exit 2) when the map cannot be used."""
    org = OrgMap.open(path)
    try:
        return _prepare(org, results, config, warn_after_days)
    finally:
        org.close()


def _prepare(org: OrgMap, results: Sequence[ScanResult], config: Config, warn_after_days: int | None) -> OrgCheck:
    from subguard.core.model import Consumer

    warnings: list[str] = []
    repos = org.repos()
    names = [r.repo for r in results]  # the repository names this check's own locations carry
    identity = [config.repo] if config.repo and len(results) == 1 else names
    groups = {g for r in results for c in r.consumers if (g := group_name(c))}
    rows = org.members(groups)
    own_names = {i for i in identity}  # the map's names for this repository: its rows are replaced
    missing = [i for i in identity if i not in repos]
    if missing:
        alike = _renamed(results, rows, set(repos) - own_names)
        guessed = alike if len(alike) == 1 else []  # one repository only: several alike are no evidence
        for old in guessed:
            warnings.append(
                f"subguard: warning: the org map has no repository '{', '.join(missing)}'; its rows under "
                f"'{old}' sit at this working tree's paths in its groups, so they are taken as this "
                f'repository\'s (set repo = "{old}" in the config, or re-run the audit)'
            )
        own_names |= set(guessed)
        if not guessed:
            alias = f" (its rows of {', '.join(alike)} sit at this tree's places)" if alike else ""
            warnings.append(
                f"subguard: warning: the org map ({org.date}) has no repository '{', '.join(missing)}': judged "
                f"as a new repository{alias}; set `repo` in the config if the audit names it otherwise"
            )
    # another repository of the map named like this scan root (when `repo` names this one otherwise):
    # its members would be taken for this repository's own in every report, so they are left out
    clash = (set(names) - own_names) & set(repos)
    for name in sorted(clash):
        warnings.append(
            f"subguard: warning: the org map's repository '{name}' has this scan root's folder name; "
            "its members are left out (check from a folder named as the repository)"
        )
    hint = next((repos[i].environment for i in sorted(own_names) if i in repos and repos[i].environment), "")
    own_results = tuple(
        dataclasses.replace(r, consumers=tuple(_hinted(c, config, hint) for c in r.consumers)) for r in results
    )
    by_repo: dict[str, list[Consumer]] = {}
    replaced: dict[str, int] = {}
    for repo, _group, _path, _line, record in rows:
        if repo in own_names or repo in clash:
            replaced[repo] = replaced.get(repo, 0) + 1
            continue
        by_repo.setdefault(repo, []).append(Consumer.model_validate_json(record))
    others = tuple(
        ScanResult(root="", repo=repo, files=(), consumers=tuple(cs), deployments=())
        for repo, cs in sorted(by_repo.items())
    )
    waivers = tuple(_waiver(record) for _repo, record in org.waivers(by_repo))
    age = org.age_days()
    if warn_after_days and age > warn_after_days:
        warnings.append(
            f"subguard: warning: the org map {org.path} is {age} days old (written {org.date}, "
            f"org-map-max-age is {warn_after_days} days): re-run the audit"
        )
    return OrgCheck(org.path, org.date, age, frozenset(names), own_results, others, waivers, tuple(warnings), replaced)


def _renamed(
    results: Sequence[ScanResult], rows: Sequence[tuple[str, str, str, int, str]], candidates: set[str]
) -> list[str]:
    """Repositories of the map that look like this one under another name: every row they have in this
    tree's groups sits at a place (group, path, line) where this tree declares the same group."""
    mine = {(g, c.location.path, c.location.line) for r in results for c in r.consumers if (g := group_name(c))}
    theirs: dict[str, set[tuple[str, str, int]]] = {}
    for repo, group, path, line, _record in rows:
        if repo in candidates:
            theirs.setdefault(repo, set()).add((group, path, line))
    return sorted(repo for repo, places in theirs.items() if places and places <= mine)


def _waiver(record: str) -> suppress.InlineWaiver:
    d = json.loads(record)
    return suppress.InlineWaiver(
        tuple(d["rules"]), d["reason"], Location.model_validate(d["location"]), tuple(d["covers"])
    )
