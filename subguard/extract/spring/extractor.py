"""Spring config extractor: `application*` / `bootstrap*` `.yml|.yaml|.properties` in any directory.

Per module (nearest pom.xml/build.gradle/... directory) the files become layers; every profile
(from `application-{p}.*` names and document conditions) gets a merged view. Consumers declared
in config are built per view: identical across profiles -> one consumer with environment "",
otherwise one per profile with environment = profile. The views are exposed to later extractors
as `facts["modules"]`: module dir -> `ModuleConfig` (Java resolves `${...}` with them).
Files under `src/test/` are parsed and validated but neither feed views nor declare consumers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from subguard.core.model import Consumer, FileRecord, FileStatus
from subguard.deploy.service import module_dir
from subguard.extract.base import ExtractResult, RepoContext, SourceFile
from subguard.extract.spring.consumers import BUILDERS, Builder
from subguard.extract.spring.env import BASE, ConfigValue, Layer, config_file, layer_rank, profiles, view
from subguard.extract.spring.props import PropertiesError, read_properties
from subguard.extract.spring.versions import adjust_config_consumers, build_versions, module_builders
from subguard.extract.spring.yaml_files import YamlError, read_yaml


@dataclass(frozen=True)
class ModuleConfig:
    """A module's Spring config: its profiles and one merged view per profile ("" = base)."""

    module: str
    profiles: tuple[str, ...]
    views: dict[str, dict[str, ConfigValue]]
    failed: tuple[str, ...] = ()  # config files of the module that could not be parsed (SG901)

    def view_for(self, profile: str) -> dict[str, ConfigValue]:
        return self.views.get(profile, self.views[BASE])


@dataclass(frozen=True)
class Failure:
    reason: str
    line: int


def parse_config_file(path: str, data: bytes) -> tuple[Layer, ...] | Failure:
    """One config file -> its layers, or a failure with reason and line (pure, memoisable)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    try:
        if path.endswith(".properties"):
            entries = tuple(read_properties(text))
            return (Layer(path, "", layer_rank(path, 0), entries),)
        docs = read_yaml(text)
    except (PropertiesError, YamlError) as exc:
        return Failure(str(exc), exc.line)
    return tuple(Layer(path, d.on_profile, layer_rank(path, d.index), d.entries) for d in docs)


def _is_test(path: str) -> bool:
    return "/src/test/" in f"/{path}"


def build_modules(
    layers_by_path: dict[str, tuple[Layer, ...]], paths: frozenset[str], failed: Sequence[str] = ()
) -> dict[str, ModuleConfig]:
    """Each module's config; a module whose config files all failed to parse is kept (with no
    values) so that placeholders it leaves unresolved can say why."""
    grouped: dict[str, list[Layer]] = {}
    broken: dict[str, list[str]] = {}
    for path, layers in sorted(layers_by_path.items()):
        if not _is_test(path):
            grouped.setdefault(module_dir(path, paths), []).extend(layers)
    for path in sorted(failed):
        if not _is_test(path):
            module = module_dir(path, paths)
            broken.setdefault(module, []).append(path)
            grouped.setdefault(module, [])
    out: dict[str, ModuleConfig] = {}
    for module, found in grouped.items():
        all_layers = tuple(found)
        names = profiles(all_layers)
        out[module] = ModuleConfig(module, names, {p: view(all_layers, p) for p in (BASE, *names)}, tuple(broken.get(module, ())))
    return out


def _strip_env(c: Consumer) -> Consumer:
    return c.model_copy(update={"environment": ""})


def module_consumers(mod: ModuleConfig, builders: Mapping[str, Builder] = BUILDERS) -> list[Consumer]:
    """Config-declared consumers of a module, collapsed across profiles when identical."""
    per_profile: dict[str, dict[str, Consumer]] = {}
    for profile in (BASE, *mod.profiles):
        found: dict[str, Consumer] = {}
        for builder in builders.values():
            found.update(builder(mod.views[profile]))
        per_profile[profile] = found
    identities = sorted({i for found in per_profile.values() for i in found})
    out: list[Consumer] = []
    for ident in identities:
        variants = {p: found[ident] for p, found in per_profile.items() if ident in found}
        if len({_strip_env(c) for c in variants.values()}) == 1 and len(variants) == len(per_profile):
            out.append(variants[BASE])
            continue
        for profile, consumer in variants.items():
            if profile == BASE and mod.profiles:
                continue
            out.append(consumer.model_copy(update={"environment": profile, "consumer_id": f"{consumer.consumer_id}@{profile}"}))
    return out


class SpringExtractor:
    name = "spring"
    needles: tuple[bytes, ...] = ()

    def claims(self, path: str) -> bool:
        return config_file(path) is not None

    def extract(self, files: Sequence[SourceFile], repo: RepoContext) -> ExtractResult:
        records: list[FileRecord] = []
        layers_by_path: dict[str, tuple[Layer, ...]] = {}
        for f in files:
            parsed = repo.memo(self.name, f.path, f.data, lambda f=f: parse_config_file(f.path, f.data))  # type: ignore[misc]
            if isinstance(parsed, Failure):
                records.append(FileRecord(path=f.path, status=FileStatus.FAILED, reason=f"line {parsed.line}: {parsed.reason}", extractor=self.name))
                continue
            layers_by_path[f.path] = parsed
            records.append(FileRecord(path=f.path, status=FileStatus.PARSED, extractor=self.name))
        failed = [r.path for r in records if r.status is FileStatus.FAILED]
        modules = build_modules(layers_by_path, repo.paths, failed)
        versions = build_versions(repo)
        consumers: list[Consumer] = []
        for mod in modules.values():
            builders = module_builders(mod.module, versions)
            consumers.extend(adjust_config_consumers(module_consumers(mod, builders), mod.module, versions))
        return ExtractResult(consumers=tuple(consumers), files=tuple(records), facts={"modules": modules})


EXTRACTOR = SpringExtractor()
