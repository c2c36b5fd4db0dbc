"""Which deployments run which consumers.

A deployment is linked to the consumers of exactly one service, chosen by the strongest evidence:

3. `Config.services`: the deployment's path, image or labels are listed under one service;
2. the same service identity (same repo and module directory, or a compose `build:` of it);
1. a name: the image name, workload name or app label equals the service's module directory name
   (or the repo name for a repo-level service);
0. the repo declares consumers in one service only and the deployment is not a well-known
   infrastructure image (broker, database, ...).

Two services tied at the strongest level is ambiguous: no link (the `deployment` subjects expose
it, and SG904 reports it).
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from subguard.core.config import Config
from subguard.core.model import Consumer, Deployment
from subguard.deploy.manifest_values import image_name
from subguard.deploy.service import match_glob

APP_LABELS = ("app", "app.kubernetes.io/name", "app.kubernetes.io/instance", "k8s-app", "component", "service")
# Images that never run the scanned code: linking them by "sole service" would be wrong.
INFRA_IMAGES = frozenset(
    {
        "rocketmq", "rocketmq-namesrv", "rocketmq-broker", "rocketmq-dashboard", "rocketmq-proxy", "mysql", "mariadb",
        "postgres", "redis", "mongo", "zookeeper", "kafka", "nginx", "busybox", "alpine", "elasticsearch", "kibana",
        "prometheus", "grafana", "etcd", "consul", "nacos-server", "minio", "rabbitmq", "memcached", "jaeger",
        # sidecars
        "envoy", "proxyv2", "istio-proxy", "linkerd-proxy", "fluent-bit", "fluentd", "filebeat", "vault",
        "cloud-sql-proxy", "opentelemetry-collector", "otel-collector", "datadog-agent", "oauth2-proxy",
    }
)

ServiceKey = tuple[str, str]  # (repo, service)


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


def _names(dep: Deployment) -> set[str]:
    labels = dict(dep.labels)
    names = {dep.name, image_name(dep.image) if dep.image else "", *(labels.get(k, "") for k in APP_LABELS)}
    return {_norm(n) for n in names if n}


def _config_service(dep: Deployment, config: Config) -> str | None:
    labels = {f"{k}={v}" for k, v in dep.labels}
    for name, spec in config.services.items():
        if any(match_glob(dep.location.path, g) for g in spec.paths):
            return name
        if dep.image and any(fnmatch.fnmatchcase(dep.image, g) or fnmatch.fnmatchcase(image_name(dep.image), g) for g in spec.images):
            return name
        if labels & set(spec.labels):
            return name
    return None


def _service_name(key: ServiceKey) -> str:
    repo, service = key
    tail = service[len(repo) + 1:] if service.startswith(repo + "/") else service
    return _norm(posixpath.basename(tail) or tail)


def strength(dep: Deployment, key: ServiceKey, config: Config) -> int:
    """How strongly a deployment belongs to a consumer service (0: no evidence)."""
    repo, service = key
    configured = _config_service(dep, config)
    if configured is not None:
        return 3 if configured == service else 0
    if dep.repo == repo and dep.service == service:
        return 2
    return 1 if _service_name(key) in _names(dep) else 0


def link(consumers: Sequence[Consumer], deployments: Sequence[Deployment], config: Config) -> Links:
    """Link every deployment to the consumers of one service, or report why it could not be."""
    services: dict[ServiceKey, list[Consumer]] = {}
    for c in consumers:
        services.setdefault((c.repo, c.service), []).append(c)
    by_consumer: dict[str, list[Deployment]] = {}
    ambiguous: dict[str, tuple[str, ...]] = {}
    chosen_by_dep: dict[str, ServiceKey] = {}
    for dep in deployments:
        if image_name(dep.image).lower() in INFRA_IMAGES and _config_service(dep, config) is None:
            continue
        scores = {key: strength(dep, key, config) for key in services}
        best = max(scores.values(), default=0)
        chosen = [key for key, s in scores.items() if s == best and s > 0]
        if not chosen:
            chosen = [key for key in services if key[0] == dep.repo]
            chosen = chosen if len(chosen) == 1 else []
        if len(chosen) > 1:
            ambiguous[dep.deployment_id] = tuple(sorted(k[1] for k in chosen))
        elif chosen:
            chosen_by_dep[dep.deployment_id] = chosen[0]
    main = _main_containers(deployments, chosen_by_dep)
    for dep in main:
        for c in services[chosen_by_dep[dep.deployment_id]]:
            by_consumer.setdefault(c.consumer_id, []).append(dep)
    linked = {d.deployment_id: chosen_by_dep[d.deployment_id][1] for d in main}
    return Links({k: tuple(v) for k, v in by_consumer.items()}, ambiguous, linked)


def _main_containers(deployments: Sequence[Deployment], chosen: dict[str, ServiceKey]) -> list[Deployment]:
    """Of several containers of one workload linked to one service, the ones named after it (if any)."""
    workloads: dict[tuple[str, str, str, str, ServiceKey], list[Deployment]] = {}
    for dep in deployments:
        key = chosen.get(dep.deployment_id)
        if key is not None:
            workloads.setdefault((dep.location.path, dep.kind, dep.namespace, dep.name, key), []).append(dep)
    out: list[Deployment] = []
    for (*_, key), deps in workloads.items():
        named = [d for d in deps if _service_name(key) in {_norm(image_name(d.image)), _norm(_container(d))}]
        out.extend(named if named and len(deps) > 1 else deps)
    return out


def _container(dep: Deployment) -> str:
    return dep.deployment_id.rsplit("/", 1)[-1] if dep.kind not in ("compose", "Dockerfile", "helm-values") else dep.name
