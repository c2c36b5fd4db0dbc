"""Which deployments run which consumers.

A deployment is linked to the consumers of exactly one service (or of one folder of it), chosen by
the strongest evidence, level by level:

4. `Config.services`: the deployment's path, image or labels are listed under one service;
3. the manifest lives inside a service's module root (`price-service/k8s/statefulset.yaml` runs
   `price-service/`'s consumers; a compose `build:` of a module counts as inside it);
2. a name: the image name, workload name or an app label equals a folder on the path of consumers
   of the deployment's own repo (a module root, or any folder inside one: then only the consumers
   under that folder), else a service's module folder name or repo name in another repo;
1. the manifest belongs to the repo-level service (no module root above it) and that service has
   consumers;
0. the repo declares consumers in one service only, the deployment is not a well-known
   infrastructure image (broker, database, ...) nor built from or inside another module, and it is
   the only workload of its manifest file left to this level (of a compose file's several unnamed
   services, which one runs the consumers is unknown: none is linked).

A module of the repo that other modules depend on (Maven or Gradle, `Consumer.hosted_by`) is no
deployable of its own: its consumers count as consumers of every module that uses it, so a
deployment built from, inside or named after `payment/` runs the listeners of the shared `mq/` module
`payment/` depends on, and for level 0 the shared module is not the repo's one service.

A name (2) beats the repo-level fallbacks (1, 0): a workload named after a folder never runs the
whole repo's consumers. Two candidates tied at the strongest level is ambiguous: no link (the
`deployment` subjects expose it, and SG904 reports it); a guess would judge the wrong service.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from subguard.core.config import Config
from subguard.core.model import Consumer, Deployment
from subguard.deploy.manifest_values import image_name
from subguard.deploy.service import match_glob

APP_LABELS = ("app", "app.kubernetes.io/name", "app.kubernetes.io/instance", "k8s-app", "component", "service")
# Images that never run the scanned code: linking them by "sole service" would be wrong.
INFRA_IMAGES = frozenset(
    {
        "rocketmq",
        "rocketmq-namesrv",
        "rocketmq-broker",
        "rocketmq-dashboard",
        "rocketmq-proxy",
        "mysql",
        "mariadb",
        "postgres",
        "redis",
        "mongo",
        "zookeeper",
        "kafka",
        "nginx",
        "busybox",
        "alpine",
        "elasticsearch",
        "kibana",
        "prometheus",
        "grafana",
        "etcd",
        "consul",
        "nacos-server",
        "minio",
        "rabbitmq",
        "memcached",
        "jaeger",
        # sidecars
        "envoy",
        "proxyv2",
        "istio-proxy",
        "linkerd-proxy",
        "fluent-bit",
        "fluentd",
        "filebeat",
        "vault",
        "cloud-sql-proxy",
        "opentelemetry-collector",
        "otel-collector",
        "datadog-agent",
        "oauth2-proxy",
    }
)

ServiceKey = tuple[str, str]  # (repo, service)


@dataclass(frozen=True)
class Unit:
    """What a deployment runs: the consumers of a service, or of one folder inside it ("" = all of it)."""

    key: ServiceKey
    folder: str = ""

    def label(self) -> str:
        return f"{self.key[1]} ({self.folder}/)" if self.folder else self.key[1]

    def holds(self, c: Consumer) -> bool:
        return not self.folder or _under(c.location.path, self.folder)


@dataclass(frozen=True)
class Links:
    """Consumer id -> the deployments that run it; deployment id -> the services it could not choose between."""

    by_consumer: dict[str, tuple[Deployment, ...]]
    ambiguous: dict[str, tuple[str, ...]]
    linked: dict[str, str]  # deployment id -> service it runs

    def deployments_of(self, consumer: Consumer) -> tuple[Deployment, ...]:
        return self.by_consumer.get(consumer.consumer_id, ())


def _norm(name: str) -> str:
    return name.strip().lower()


def _under(path: str, folder: str) -> bool:
    return not folder or path.startswith(folder + "/")


def names(dep: Deployment) -> set[str]:
    """The names a deployment goes by: workload name, image name, app labels (lower case)."""
    labels = dict(dep.labels)
    found = {dep.name, image_name(dep.image) if dep.image else "", *(labels.get(k, "") for k in APP_LABELS)}
    return {_norm(n) for n in found if n}


def module_root(key: ServiceKey) -> str | None:
    """The module folder of a service named by `service_for` ("" for the repo level); None for a
    service named in the config (its folders are not known from its name)."""
    repo, service = key
    if service == repo:
        return ""
    if repo and service.startswith(repo + "/"):
        return service[len(repo) + 1 :]
    return None if repo else service


def _config_service(dep: Deployment, config: Config) -> str | None:
    labels = {f"{k}={v}" for k, v in dep.labels}
    for name, spec in config.services.items():
        if any(match_glob(dep.location.path, g) for g in spec.paths):
            return name
        if dep.image and any(
            fnmatch.fnmatchcase(dep.image, g) or fnmatch.fnmatchcase(image_name(dep.image), g) for g in spec.images
        ):
            return name
        if labels & set(spec.labels):
            return name
    return None


def _service_name(key: ServiceKey) -> str:
    repo, service = key
    tail = service[len(repo) + 1 :] if service.startswith(repo + "/") else service
    return _norm(posixpath.basename(tail) or tail)


class _Index:
    """The consumer services of a scan, and the folders on their consumers' paths by name."""

    def __init__(self, consumers: Sequence[Consumer]) -> None:
        self.services: dict[ServiceKey, list[Consumer]] = {}
        self.folders: dict[tuple[str, str], set[str]] = {}  # (repo, folder name) -> folder paths
        self.shared: set[ServiceKey] = set()  # services other modules of the repo depend on
        for c in consumers:
            self.services.setdefault((c.repo, c.service), []).append(c)
            self._folders(c.repo, posixpath.dirname(c.location.path))
            for host in c.hosted_by:  # a shared module's consumers run where the modules using it run
                self.services.setdefault((c.repo, host), []).append(c)
                self.shared.add((c.repo, c.service))
                self._folders(c.repo, module_root((c.repo, host)) or "")

    def _folders(self, repo: str, folder: str) -> None:
        while folder:
            self.folders.setdefault((repo, _norm(posixpath.basename(folder))), set()).add(folder)
            folder = posixpath.dirname(folder)

    def inside(self, dep: Deployment) -> list[Unit]:
        """Level 3: the service whose module root holds the manifest (the deepest one), or whose
        identity the manifest shares."""
        own = (dep.repo, dep.service)
        if own in self.services and module_root(own) != "":
            return [Unit(own)]
        best: list[tuple[int, ServiceKey]] = []
        for key in self.services:
            root = module_root(key)
            if key[0] == dep.repo and root and _under(dep.location.path, root):
                best.append((root.count("/"), key))
        return [Unit(max(best)[1])] if best else []

    def _folder_units(self, repo: str, folder: str) -> list[Unit]:
        """The consumers a workload named after `folder` runs: those of the service that holds the
        folder, under it; else every service whose module lies below it."""
        keys = {
            key
            for key, cs in self.services.items()
            if key[0] == repo
            and (any(_under(c.location.path, folder) for c in cs) or _inside(module_root(key), folder))
        }
        holding = sorted(
            (root.count("/") if root else -1, k)
            for k in keys
            if (root := module_root(k)) is not None and (root == folder or _under(folder, root))
        )
        if holding:
            key = holding[-1][1]  # the deepest module at or above the folder: its consumers are the ones under it
            return [Unit(key, "" if module_root(key) == folder else folder)]
        return [Unit(k) for k in sorted(keys)] if folder else []

    def named(self, dep: Deployment) -> list[Unit]:
        """Level 2: folders of the deployment's own repo named like it, else services of other repos."""
        wanted = names(dep)
        units: set[Unit] = set()
        for name in wanted:
            for folder in self.folders.get((dep.repo, name), ()):
                units.update(self._folder_units(dep.repo, folder))
        if dep.repo and _norm(dep.repo) in wanted:
            units.update(self._folder_units(dep.repo, ""))
        if not units:
            units = {Unit(key) for key in self.services if key[0] != dep.repo and _service_name(key) in wanted}
        return _outermost(units)

    def repo_level(self, dep: Deployment) -> list[Unit]:
        """Level 1: the manifest and consumers both belong to the repo-level service."""
        own = (dep.repo, dep.service)
        return [Unit(own)] if own in self.services and module_root(own) == "" else []

    def sole(self, dep: Deployment) -> list[Unit]:
        """Level 0: the only consumer service of the deployment's repo (a shared module counts as
        the modules that use it: with several of them, which one a deployment runs is unknown); never
        for a deployment built from or inside another module of the repo (it runs that module)."""
        if module_root((dep.repo, dep.service)):
            return []
        keys = [key for key in self.services if key[0] == dep.repo and key not in self.shared]
        return [Unit(keys[0])] if len(keys) == 1 else []


def _inside(root: str | None, folder: str) -> bool:
    """Whether a module root lies at or below `folder` (a folder named like a workload)."""
    return bool(root) and bool(folder) and (root == folder or _under(root or "", folder))


def _outermost(units: Iterable[Unit]) -> list[Unit]:
    """One unit per service: the whole service, else its outermost folder; nested folders of one
    service are one workload's names, not a choice."""
    out: list[Unit] = []
    for u in sorted(units, key=lambda u: (u.key, u.folder.count("/") if u.folder else -1, u.folder)):
        if any(o.key == u.key and (not o.folder or _under(u.folder, o.folder)) for o in out):
            continue
        out.append(u)
    return out


def candidates(dep: Deployment, index: _Index, config: Config) -> tuple[list[Unit], bool]:
    """The units of the strongest level that has any (several: ambiguous), and whether that level
    is the last fallback (`_Index.sole`)."""
    configured = _config_service(dep, config)
    if configured is not None:
        return [Unit(key) for key in index.services if key[1] == configured], False
    for level in (index.inside, index.named, index.repo_level):
        found = level(dep)
        if found:
            return found, False
    return index.sole(dep), True


def _one_per_file(by_elimination: Sequence[Deployment]) -> set[str]:
    """The deployments linked by elimination that are the only such workload of their manifest file:
    of a compose file's five unnamed services, which one runs the repo's consumers is unknown."""
    names: dict[str, set[str]] = {}
    for dep in by_elimination:
        names.setdefault(dep.location.path, set()).add(dep.name)
    return {d.deployment_id for d in by_elimination if len(names[d.location.path]) == 1}


def link(consumers: Sequence[Consumer], deployments: Sequence[Deployment], config: Config) -> Links:
    """Link every deployment to the consumers of one service, or report why it could not be."""
    if not deployments:  # nothing to link: the consumers are not even indexed
        return Links({}, {}, {})
    index = _Index(consumers)
    ambiguous: dict[str, tuple[str, ...]] = {}
    chosen_by_dep: dict[str, Unit] = {}
    by_elimination: list[Deployment] = []
    for dep in deployments:
        if image_name(dep.image).lower() in INFRA_IMAGES and _config_service(dep, config) is None:
            continue
        chosen, eliminated = candidates(dep, index, config)
        if len(chosen) > 1:
            ambiguous[dep.deployment_id] = tuple(sorted(u.label() for u in chosen))
        elif chosen:
            chosen_by_dep[dep.deployment_id] = chosen[0]
            if eliminated:
                by_elimination.append(dep)
    alone = _one_per_file(by_elimination)
    for dep in by_elimination:
        if dep.deployment_id not in alone:
            del chosen_by_dep[dep.deployment_id]
    by_consumer: dict[str, list[Deployment]] = {}
    main = _main_containers(deployments, chosen_by_dep)
    for dep in main:
        unit = chosen_by_dep[dep.deployment_id]
        for c in index.services[unit.key]:
            if unit.holds(c):
                by_consumer.setdefault(c.consumer_id, []).append(dep)
    linked = {d.deployment_id: chosen_by_dep[d.deployment_id].key[1] for d in main}
    return Links({k: tuple(v) for k, v in by_consumer.items()}, ambiguous, linked)


def _main_containers(deployments: Sequence[Deployment], chosen: dict[str, Unit]) -> list[Deployment]:
    """Of several containers of one workload linked to one service, the ones named after it (if any)."""
    workloads: dict[tuple[str, str, str, str, Unit], list[Deployment]] = {}
    for dep in deployments:
        unit = chosen.get(dep.deployment_id)
        if unit is not None:
            workloads.setdefault((dep.location.path, dep.kind, dep.namespace, dep.name, unit), []).append(dep)
    out: list[Deployment] = []
    for (*_, unit), deps in workloads.items():
        own = {_service_name(unit.key), _norm(posixpath.basename(unit.folder))} - {""}
        named = [d for d in deps if own & {_norm(image_name(d.image)), _norm(_container(d))}]
        out.extend(named if named and len(deps) > 1 else deps)
    return out


def _container(dep: Deployment) -> str:
    return (
        dep.deployment_id.rsplit("/", 1)[-1] if dep.kind not in ("compose", "Dockerfile", "helm-values") else dep.name
    )
