"""Spring config extractor: `application*` / `bootstrap*` `.yml|.yaml|.properties` in any directory.

Per module (nearest pom.xml/build.gradle/... directory) the files become layers; every profile
(from `application-{p}.*` names and document conditions) gets a merged view; `application-default.*`
is the implicit default profile (in the base view only). Files a layer names with
`spring.config.import` (`classpath:`, `file:`, relative, `optional:`; `nacos:<data-id>` and
`apollo://<namespace>` matched to a file of that name in the repo), `spring.config.location` /
`additional-location` and Nacos `shared-configs` / `extension-configs` data-ids are loaded as layers
just above the layer that names them (`imports.py`). Consumers declared in config are built per
view: identical across profiles -> one consumer with environment "", otherwise one per profile with
environment = profile. The views are exposed to later extractors as `facts["modules"]`: module dir
-> `ModuleConfig` (Java resolves `${...}` with them); a module without config of its own that
application modules of the repo depend on (a shared starter) gets theirs (`shared.py`).
Files under `src/test/` are parsed and validated but neither feed views nor declare consumers.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from subguard.core.model import Consumer, FileRecord, FileStatus
from subguard.deploy.service import dependents, module_dir
from subguard.extract import NEEDLES
from subguard.extract.base import ExtractResult, RepoContext, SourceFile
from subguard.extract.build import RepoBuilds
from subguard.extract.spring.consumers import BUILDERS, Builder
from subguard.extract.spring.env import BASE, ConfigValue, Layer, canonical, config_file, layer_rank, profiles, view
from subguard.extract.spring.imports import Importer
from subguard.extract.spring.props import PropertiesError, read_properties
from subguard.extract.spring.versions import adjust_config_consumers, build_versions, module_builders
from subguard.extract.spring.yaml_files import YamlError, read_yaml

_SCS_BINDINGS = canonical("spring.cloud.stream.bindings") + "."


@dataclass(frozen=True)
class ModuleConfig:
    """A module's Spring config: its profiles and one merged view per profile ("" = base)."""

    module: str
    profiles: tuple[str, ...]
    views: dict[str, dict[str, ConfigValue]]
    failed: tuple[str, ...] = ()  # config files of the module that could not be parsed (SG901)
    via: tuple[str, ...] = ()  # a shared module's config: the application modules it was taken from

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
    layers_by_path: dict[str, tuple[Layer, ...]],
    paths: frozenset[str],
    failed: Sequence[str] = (),
    expand: Callable[[str, list[Layer]], list[Layer]] | None = None,
    packaged: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, ModuleConfig]:
    """Each module's config; a module whose config files all failed to parse is kept (with no
    values) so that placeholders it leaves unresolved can say why. `expand(module, layers)` adds
    the layers of the files they import; `packaged` (module -> config files its build puts on its
    class path from other folders, `packaged_config`) adds theirs."""
    grouped: dict[str, list[Layer]] = {}
    broken: dict[str, list[str]] = {}
    for path, layers in sorted(layers_by_path.items()):
        if not _is_test(path):
            grouped.setdefault(module_dir(path, paths), []).extend(layers)
    for module, extra in sorted((packaged or {}).items()):
        grouped.setdefault(module, []).extend(layer for path in extra for layer in layers_by_path.get(path, ()))
    for path in sorted(failed):
        if not _is_test(path):
            module = module_dir(path, paths)
            broken.setdefault(module, []).append(path)
            grouped.setdefault(module, [])
    out: dict[str, ModuleConfig] = {}
    for module, found in grouped.items():
        all_layers = tuple(expand(module, found) if expand is not None else found)
        names = profiles(all_layers)
        out[module] = ModuleConfig(
            module, names, {p: view(all_layers, p) for p in (BASE, *names)}, tuple(broken.get(module, ()))
        )
    return out


def packaged_config(builds: RepoBuilds, config_paths: Iterable[str], paths: frozenset[str]) -> dict[str, list[str]]:
    """Module -> the Spring config files its Maven `<build><resources>` package from folders outside
    it (`../conf/common` holding `config/application.yml` is `classpath:/config/application.yml`
    of every module that lists it): those a resource folder holds at its top or in its `config/`.
    A resource folder inside the module adds nothing: its files are the module's already."""
    wanted = sorted(p for p in config_paths if not _is_test(p))
    out: dict[str, list[str]] = {}
    for module in builds.maven_modules():
        for folder in builds.resource_dirs(module):
            for path in wanted:
                rel = path[len(folder) + 1 :] if folder else path
                if (
                    (not folder or path.startswith(folder + "/"))
                    and posixpath.dirname(rel) in ("", "config")
                    and module_dir(path, paths) != module
                ):
                    out.setdefault(module, []).append(path)
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
            out.append(
                consumer.model_copy(update={"environment": profile, "consumer_id": f"{consumer.consumer_id}@{profile}"})
            )
    return out


def _agreed(configs: Sequence[ModuleConfig], profile: str) -> dict[str, ConfigValue]:
    """One view for a shared module run by several applications: a key they all set to the same
    text keeps it; a key they set differently (or only some set) is marked `differs`, so that a
    placeholder of it stays unresolved instead of taking a default none of them runs with."""
    views = [(c.module or ".", c.view_for(profile)) for c in configs]
    out: dict[str, ConfigValue] = {}
    for key in sorted({k for _, v in views for k in v}):
        found = [(m, v.get(key)) for m, v in views]
        first = next(cv for _, cv in found if cv is not None)
        if all(cv is not None and cv.value == first.value for _, cv in found):
            out[key] = first
        else:
            differs = tuple(f"{m}: {cv.value!r}" if cv is not None else f"{m}: (not set)" for m, cv in found)
            out[key] = replace(first, differs=differs)
    return out


def shared_modules(
    modules: Mapping[str, ModuleConfig], builds: RepoBuilds, paths: frozenset[str]
) -> dict[str, ModuleConfig]:
    """Config for modules without their own that application modules of the repo depend on
    (directly or through other modules): a shared starter's `${...}` placeholders are resolved by
    the application that runs it. One such application: its config as is; several: the keys they
    all agree on (a placeholder set differently per application stays unresolved, with the reason)."""
    deps = builds.dependencies()
    if not deps:
        return {}
    running = {m for m in modules if modules[m].views[BASE] and not _is_test(m + "/")}
    out: dict[str, ModuleConfig] = {}
    for lib, users in sorted(dependents(deps).items()):
        apps = sorted(users & running)
        if lib in modules or not apps:
            continue
        configs = [modules[a] for a in apps]
        if len(configs) == 1:
            out[lib] = ModuleConfig(lib, configs[0].profiles, configs[0].views, configs[0].failed, (configs[0].module,))
            continue
        names = tuple(dict.fromkeys(p for c in configs for p in c.profiles))
        views = {p: _agreed(configs, p) for p in (BASE, *names)}
        failed = tuple(f for c in configs for f in c.failed)
        out[lib] = ModuleConfig(lib, names, views, failed, tuple(c.module for c in configs))
    return out


class SpringExtractor:
    name = "spring"
    needles: tuple[bytes, ...] = NEEDLES["spring"]

    def claims(self, path: str) -> bool:
        return config_file(path) is not None

    def extract(self, files: Sequence[SourceFile], repo: RepoContext) -> ExtractResult:
        records: list[FileRecord] = []
        layers_by_path: dict[str, tuple[Layer, ...]] = {}
        for f in files:
            parsed = repo.memo(self.name, f.path, f.data, lambda f=f: parse_config_file(f.path, f.data))  # type: ignore[misc]
            if isinstance(parsed, Failure):
                records.append(
                    FileRecord(
                        path=f.path,
                        status=FileStatus.FAILED,
                        reason=f"line {parsed.line}: {parsed.reason}",
                        extractor=self.name,
                    )
                )
                continue
            layers_by_path[f.path] = parsed
            records.append(FileRecord(path=f.path, status=FileStatus.PARSED, extractor=self.name))
        failed = [r.path for r in records if r.status is FileStatus.FAILED]
        importer = Importer(repo, self.name, lambda path, data: parse_config_file(path, data))
        builds = RepoBuilds(repo) if layers_by_path or failed else None
        packaged = packaged_config(builds, layers_by_path, repo.paths) if builds is not None else {}
        modules = build_modules(layers_by_path, repo.paths, failed, importer.expand, packaged)
        records.extend(importer.records(given={f.path for f in files}))
        versions = build_versions(repo)
        consumers: list[Consumer] = []
        for mod in modules.values():
            streams = any(k.startswith(_SCS_BINDINGS) for v in mod.views.values() for k in v)
            builders = module_builders(mod.module, versions, builds if streams else None)
            # a packaged file's own declarations are its folder's (listed once); here it gives values
            others = frozenset(packaged.get(mod.module, ()))
            declared = [c for c in module_consumers(mod, builders) if c.location.path not in others]
            consumers.extend(adjust_config_consumers(declared, mod.module, versions))
        if builds is not None:
            modules.update(shared_modules(modules, builds, repo.paths))
        return ExtractResult(consumers=tuple(consumers), files=tuple(records), facts={"modules": modules})


EXTRACTOR = SpringExtractor()
