"""Subjects for the environment, service and deployment rules (SG201, SG202, SG203, SG301, SG302).

Registered in `subguard.rules.subjects.KINDS`:

- `group/cluster`: one per (group, cluster). Members of a group are split by the cluster their
  name server names; members whose cluster is unknown are assumed to share every cluster of the
  group (and the subject says so in `cluster_note`). Members whose environment is unknown do not
  count as production or non-production.
- `subscription/environment`: one per subscription of a consumer whose environment is known: the
  environment its topic name marks (`Config.topic_environment_patterns`, else conventions).
- `deployment`: one per deployment record: which service it was linked to, or which services it
  could not be told apart from (ambiguous links are never guessed).
- `consumer+deployment`: one per (consumer, linked runtime deployment) in compatible
  environments: where the local offset file lives, whether it is persistent, and whether the
  client id that names its directory survives a restart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from subguard.core.config import Config
from subguard.core.inventory import Group
from subguard.core.model import Consumer, Deployment
from subguard.deploy.environment import (
    UNKNOWN_CLUSTER,
    Cluster,
    EnvInfo,
    canonical,
    classify,
    cluster_of,
    environment_of,
    same_environment,
)
from subguard.deploy.offset_store import client_id, local_store, offset_dir
from subguard.rules.conditions import UNKNOWN
from subguard.rules.subjects import KindSpec, Member, Subject, Universe, Unknown, Variant, group_ident

# --- group/cluster -------------------------------------------------------------------------------


def clusters_of(g: Group) -> list[tuple[Cluster, list[Consumer]]]:
    """Members by cluster: overlapping address sets join; unknown-cluster members join every cluster."""
    known = [(cluster_of(c.name_server), c) for c in g.members]
    parts: list[tuple[Cluster, list[Consumer]]] = []
    for cl, c in known:
        if not cl.known:
            continue
        for i, (pcl, pm) in enumerate(parts):
            if pcl.overlaps(cl):
                parts[i] = (
                    Cluster(pcl.addresses | cl.addresses, " / ".join(dict.fromkeys([pcl.text, cl.text])), True),
                    [*pm, c],
                )
                break
        else:
            parts.append((cl, [c]))
    unknown = [c for cl, c in known if not cl.known]
    if not parts:
        return [(UNKNOWN_CLUSTER, unknown)]
    return [(cl, [*members, *unknown]) for cl, members in parts]


def _env_member(c: Consumer, info: EnvInfo, g: Group) -> Member:
    kind = "production" if info.production else "non-production"
    return Member(c.location, f"'{g.name}' in {kind} environment '{info.name}' ({c.service or c.repo})")


def _group_cluster(g: Group, cluster: Cluster, members: Sequence[Consumer], config: Config) -> Subject:
    envs = [(c, environment_of(c, config)) for c in members]
    prod = [(c, e) for c, e in envs if e.production is True]
    nonprod = [(c, e) for c, e in envs if e.production is False]
    unclassified = [(c, e) for c, e in envs if e.production is None and e.name]
    unknown_cluster = [c for c in members if not cluster_of(c.name_server).known]
    note = ""
    if unknown_cluster:
        where = ", ".join(sorted({str(c.location) for c in unknown_cluster})[:3])
        note = f" (no name server is known for {where}; assumed to be the same cluster)"
    env_variants = tuple(
        Variant(label, tuple(_env_member(c, e, g) for c, e in group))
        for label, group in (("non-production", nonprod), ("production", prod))
        if group
    )
    clustering = [c for c in members if c.message_model.value == "CLUSTERING"]
    undecided = [c for c in members if c.message_model.value is None]
    services = sorted({c.service or c.repo for c in clustering})
    maybe = sorted({c.service or c.repo for c in clustering + undecided})
    service_count: Any = len(services) if len(services) > 1 or len(maybe) <= 1 else UNKNOWN
    by_service: dict[str, list[Member]] = {}
    for c in clustering:
        by_service.setdefault(c.service or c.repo, []).append(
            Member(c.location, f"CLUSTERING member of '{g.name}' in service {c.service or c.repo}")
        )
    fields = {
        "group": g.name,
        "cluster": cluster.text or "unknown",
        "cluster_known": not unknown_cluster,
        "cluster_note": note,
        "member_count": len(members),
        "production_environments": sorted({e.name for _, e in prod}),
        "nonproduction_environments": sorted({e.name for _, e in nonprod}),
        # a named environment that is neither production nor not by config or convention could be
        # either: with the other class present, SG201 cannot be decided (SG902 says which, never silence)
        "has_production": True if prod else UNKNOWN if unclassified and nonprod else False,
        "has_nonproduction": True if nonprod else UNKNOWN if unclassified and prod else False,
        "clustering_services": services,
        "clustering_service_count": service_count,
    }
    unknowns = tuple(
        Unknown(
            "message model of the consumer",
            c.message_model.detail,
            c.message_model.location or c.location,
            (c.repo, c.location.path, "message model"),
            owner=c.consumer_id,
        )
        for c in undecided
    ) + tuple(
        Unknown(
            f"whether environment '{e.name}' is production",
            f"'{e.name}' is not in the `environments:` config and its name follows no convention "
            "(prod/production/prd; staging/stg/uat, test/qa, dev/local); add it to `environments:` with `production: true|false`",
            c.location,
            ("environment", e.name),
        )
        for c, e in unclassified
        if prod or nonprod
    )
    first = (nonprod or prod)[0][0] if (nonprod or prod) else members[0]
    return Subject(
        "group/cluster",
        fields,
        first.location,
        group_ident(g, ",".join(sorted(cluster.addresses)) or "?"),
        group=g.name,
        sample=g.sample,
        variants={
            "environment_classes": env_variants,
            "clustering_services": tuple(Variant(s, tuple(m)) for s, m in sorted(by_service.items())),
        },
        unknowns=unknowns,
    )


def _build_group_clusters(u: Universe) -> Iterable[Subject]:
    for g in u.groups.groups.values():
        for cluster, members in clusters_of(g):
            if members:
                yield _group_cluster(g, cluster, members, u.config)


GROUP_CLUSTER = KindSpec(
    {
        "group": "the group name (namespace%group when a namespace is known)",
        "cluster": "the cluster's name-server addresses as written ('unknown' when none is known)",
        "cluster_known": "every member of this subject names its cluster",
        "cluster_note": "text saying which members' cluster was assumed ('' when none)",
        "member_count": "members on this cluster (unknown-cluster members included)",
        "production_environments": "production environments of members",
        "nonproduction_environments": "non-production environments of members",
        "has_production": "some member runs in a production environment",
        "has_nonproduction": "some member runs in a non-production environment",
        "clustering_services": "services with a CLUSTERING member",
        "clustering_service_count": "number of those services (UNKNOWN when an undecided message model could change it)",
    },
    {
        "environment_classes": "members by production / non-production (non-production first)",
        "clustering_services": "CLUSTERING members by service",
    },
    _build_group_clusters,
    per_group=True,
)


# --- subscription/environment --------------------------------------------------------------------

DEFAULT_TOPIC_PATTERNS: dict[str, str] = {
    "prod": r"(?i)(^|[-_.%])(prod|production|prd)($|[-_.])",
    "staging": r"(?i)(^|[-_.%])(staging|stg|uat|preprod)($|[-_.])",
    "test": r"(?i)(^|[-_.%])(test|qa|sit)($|[-_.])",
    "dev": r"(?i)(^|[-_.%])(dev|local)($|[-_.])",
}


def topic_environment(topic: str, config: Config) -> str | None:
    """The environment a topic name marks (first matching pattern), or None."""
    patterns = config.topic_environment_patterns or DEFAULT_TOPIC_PATTERNS
    for env, pattern in patterns.items():
        try:
            if re.search(pattern, topic):
                return env
        except re.error:
            continue
    return None


def _build_topic_envs(u: Universe) -> Iterable[Subject]:
    for c in u.consumers:
        info = environment_of(c, u.config)
        if not info.name:
            continue
        for s in c.subscriptions:
            topic = s.topic.value
            marked = topic_environment(topic, u.config) if topic is not None else None
            if topic is None:
                mismatch: Any = UNKNOWN
            elif marked is None:
                mismatch = False
            else:
                mismatch = not same_environment(info, classify(marked, u.config)) and not same_environment(
                    info, EnvInfo(marked, canonical(marked), None, "pattern")
                )
            unknowns = (
                ()
                if topic is not None
                else (
                    Unknown(
                        "topic of the subscription",
                        s.topic.detail,
                        s.topic.location or s.location,
                        (c.repo, s.location.path, "topic"),
                        owner=c.consumer_id,
                    ),
                )
            )
            yield Subject(
                "subscription/environment",
                {
                    "group": c.group.value or "",
                    "topic": topic if topic is not None else UNKNOWN,
                    "environment": info.name,
                    "topic_environment": marked or "",
                    "environment_mismatch": mismatch,
                    "service": c.service,
                    "path": s.location.path,
                },
                s.topic.location or s.location,
                (c.repo, s.location.path, c.group.value or "?", topic or "?", info.name),
                group=c.group.value or "",
                topic=topic or "",
                unknowns=unknowns,
            )


SUBSCRIPTION_ENVIRONMENT = KindSpec(
    {
        "group": "the consumer's group",
        "topic": "the subscribed topic",
        "environment": "the consumer's environment",
        "topic_environment": "the environment the topic name marks ('' when none)",
        "environment_mismatch": "the topic marks another environment than the consumer's",
        "service": "service",
        "path": "file path",
    },
    {},
    _build_topic_envs,
    per_group=True,
)


# --- consumer+deployment -------------------------------------------------------------------------

RUNTIME_KINDS_EXCLUDED = frozenset({"Dockerfile"})


def _compatible(c: Consumer, d: Deployment, config: Config) -> bool:
    ce, de = environment_of(c, config), classify(d.environment, config)
    if not ce.name or not de.name:
        return True
    return same_environment(ce, de)


def _with_image(d: Deployment, images: Sequence[Deployment]) -> Deployment:
    """A runtime deployment completed by the one Dockerfile linked with it: env and options it inherits."""
    if len(images) != 1:
        return d
    img = images[0]
    env = {**dict(img.env), **dict(d.env)}
    options = [*img.jvm_options, *d.jvm_options]
    return d.model_copy(update={"env": tuple(env.items()), "jvm_options": tuple(options)})


def _pair_fields(c: Consumer, d: Deployment) -> tuple[dict[str, Any], list[Unknown]]:
    store = local_store(c)
    od = offset_dir(c, d)
    cid = client_id(c, d) if od is not None else None
    unknowns: list[Unknown] = []
    key = (c.repo, c.location.path, d.deployment_id)
    persistent: Any = None
    if od is not None:
        persistent = od.persistent if od.persistent is not None else UNKNOWN
        if od.persistent is None:
            unknowns.append(Unknown("persistence of the offset directory", od.why, d.location, (*key, "offset_dir")))
    stable: Any = None
    if cid is not None:
        stable = cid.stable if cid.stable is not None else UNKNOWN
        if cid.stable is None:
            unknowns.append(
                Unknown(
                    "stability of the client id",
                    f"IP: {cid.ip}; {cid.instance}",
                    c.location,
                    (*key, "client_id"),
                    owner=c.consumer_id,
                )
            )
    if c.message_model.value is None:
        unknowns.append(
            Unknown(
                "message model of the consumer",
                c.message_model.detail,
                c.message_model.location or c.location,
                (*key, "model"),
                owner=c.consumer_id,
            )
        )
    fields = {
        "group": c.group.value if c.group.known else UNKNOWN,
        "message_model": c.message_model.value if c.message_model.known else UNKNOWN,
        "client": c.client.value,
        "service": c.service,
        "environment": c.environment,
        "deployment": d.deployment_id,
        "deployment_kind": d.kind,
        "deployment_name": d.name,
        "container": d.container,
        "replicas": d.replicas,
        "offset_store": {"java": "java-local-file", "cpp": "cpp-local-file"}.get(
            store, "broker" if c.message_model.known else UNKNOWN
        ),
        "offset_dir": od.text if od else "",
        "offset_dir_why": od.why if od else "",
        "offset_dir_persistent": persistent,
        "client_id_stable": stable,
        "client_ip_source": cid.ip if cid else "",
        "instance_name_source": cid.instance if cid else "",
    }
    return fields, unknowns


def _build_pairs(u: Universe) -> Iterable[Subject]:
    links = u.links
    for c in u.consumers:
        deps = links.deployments_of(c)
        images = [d for d in deps if d.kind in RUNTIME_KINDS_EXCLUDED]
        for d in deps:
            if d.kind in RUNTIME_KINDS_EXCLUDED or not _compatible(c, d, u.config):
                continue
            full = _with_image(d, images)
            fields, unknowns = _pair_fields(c, full)
            yield Subject(
                "consumer+deployment",
                fields,
                d.location,
                (c.repo, c.location.path, c.group.value or "?", d.deployment_id),
                group=c.group.value or "",
                related=(
                    (c.location, f"the {c.message_model.value or '?'} consumer of '{c.group.value or '?'}' it runs"),
                ),
                unknowns=tuple(unknowns),
            )


CONSUMER_DEPLOYMENT = KindSpec(
    {
        "group": "the consumer's group",
        "message_model": "CLUSTERING or BROADCASTING",
        "client": "client family",
        "service": "service",
        "environment": "the consumer's environment",
        "deployment": "deployment id (file#kind/namespace/name/container)",
        "deployment_kind": "Deployment, StatefulSet, compose, ...",
        "deployment_name": "workload name",
        "container": "runs in a container",
        "replicas": "replica count when declared",
        "offset_store": "java-local-file, cpp-local-file (BROADCASTING) or broker (CLUSTERING / gRPC)",
        "offset_dir": "the local offset directory as the client computes it ('' without a local store)",
        "offset_dir_why": "how the directory and its persistence were decided",
        "offset_dir_persistent": "the directory is on a volume that outlives the container (None without a local store)",
        "client_id_stable": "the clientId (<ip>@<instanceName>) naming the offset sub-directory survives a restart",
        "client_ip_source": "where the client IP comes from",
        "instance_name_source": "where the instance name comes from",
    },
    {},
    _build_pairs,
)


# --- deployment ----------------------------------------------------------------------------------


def _build_deployments(u: Universe) -> Iterable[Subject]:
    links = u.links
    for d in u.deployments:
        candidates = links.ambiguous.get(d.deployment_id, ())
        service = links.linked.get(d.deployment_id, "")
        status = "ambiguous" if candidates else "linked" if service else "unlinked"
        yield Subject(
            "deployment",
            {
                "deployment": d.deployment_id,
                "deployment_kind": d.kind,
                "deployment_name": d.name,
                "image": d.image,
                "service": d.service,
                "environment": d.environment,
                "link_status": status,
                "linked_service": service,
                "candidate_services": list(candidates),
            },
            d.location,
            (d.repo, d.deployment_id),
        )


DEPLOYMENT = KindSpec(
    {
        "deployment": "deployment id (file#kind/namespace/name/container)",
        "deployment_kind": "Deployment, StatefulSet, compose, ...",
        "deployment_name": "workload name",
        "image": "container image",
        "service": "the service the manifest itself belongs to",
        "environment": "environment named by namespace, path or file name",
        "link_status": "linked, ambiguous (several services tie) or unlinked (no consumer service matches)",
        "linked_service": "the consumer service it runs ('' unless linked)",
        "candidate_services": "services it could not choose between (ambiguous only)",
    },
    {},
    _build_deployments,
)
