"""Version-specific rocketmq-spring and SCA binder behaviour, applied to Spring and Java consumers.

Reads the build extractor's `facts["modules"]` (versions per module dir) and:

- #450: rocketmq-spring 2.2.0-2.2.2 builds a hidden `DefaultLitePullConsumer` from
  `rocketmq.name-server` + `rocketmq.consumer.group` + `rocketmq.consumer.topic`
  (`legacy_pull_consumer`, a Spring config builder); with the version unknown, listeners of that
  group get a note instead.
- the SCA binder's consumer key set and anonymous-group rule by its version (`sca_binder`);
- instance names of listeners (2.2.0-2.2.2) and binder consumers (by SCA version);
- `rocketmq.consumer.listeners.<group>.<topic>=false` drops a listener;
- `rocketmq.consumer.namespace` fills a listener's namespace when the annotation has none (2.2.3+).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial

from subguard.core.model import ClientFamily, Consumer, Value
from subguard.extract.base import RepoContext
from subguard.extract.build import RepoBuilds
from subguard.extract.spring.consumers import (
    BUILDERS,
    UNKNOWN_BINDER,
    Binder,
    Builder,
    View,
    config_value,
    lite_pull_consumer,
    lite_pull_trigger,
    stream_bindings,
)
from subguard.extract.spring.env import BASE, canonical
from subguard.rocketmq.client_versions import (
    SCA_STREAM,
    binder_consumer_rules,
    binder_instance_name,
    consumer_namespace_applies,
    legacy_pull_trigger,
    listener_instance_name,
    spring_version,
    versions_for,
)

Versions = Mapping[str, Mapping[str, Value]]
LEGACY = "rocketmq.consumer."
NOTE_450 = (
    "rocketmq-spring 2.2.0-2.2.2 (#450) also creates a hidden DefaultLitePullConsumer from rocketmq.consumer.group/"
    "topic + rocketmq.name-server: a second member of this group that subscribes on its own"
)
HIDDEN_450 = (
    "hidden DefaultLitePullConsumer of rocketmq-spring 2.2.0-2.2.2 (#450): rocketmq.consumer.group/topic with "
    "rocketmq.name-server create it even when only a @RocketMQMessageListener was meant; 2.2.3 renamed the "
    "trigger keys to rocketmq.pull-consumer.*"
)


def build_versions(repo: RepoContext) -> Versions:
    """The build extractor's versions by module dir ({} when it did not run)."""
    build = repo.prior.get("build")
    found = build.facts.get("modules", {}) if build is not None else {}
    return found if isinstance(found, Mapping) else {}


def legacy_pull_consumer(view: View) -> list[tuple[str, Consumer]]:
    """The hidden lite-pull bean of rocketmq-spring 2.2.0-2.2.2 (use only for those versions)."""
    consumer = lite_pull_consumer(view, LEGACY, "legacy-pull-consumer", "rocketmq-spring consumer default")
    if consumer is None:
        return []
    # the instance name is set from the version by `adjust_config_consumers`
    consumer = consumer.model_copy(update={"instance_name": None, "notes": (*consumer.notes, HIDDEN_450)})
    return [("rocketmq.consumer(legacy-pull)", consumer)]


def wants_legacy_pull(module: str, versions: Versions) -> bool:
    """rocketmq-spring 2.2.0-2.2.2: the lite-pull bean comes from `rocketmq.consumer.*` (and
    `rocketmq.pull-consumer.*` does not exist yet)."""
    return legacy_pull_trigger(spring_version(versions_for(module, versions))) is True


def sca_binder(version: Value | None) -> Binder:
    """The binder rules of a spring-cloud-starter-stream-rocketmq version (all unknown without one)."""
    rules = binder_consumer_rules(version)
    if version is None or rules is None:
        return UNKNOWN_BINDER
    return Binder(version=version.value, new_keys=rules[0], anonymous=rules[1])


def module_builders(module: str, versions: Versions, builds: RepoBuilds | None = None) -> dict[str, Builder]:
    """The Spring config builders for a module's versions: the lite-pull trigger keys of its
    rocketmq-spring (2.2.0-2.2.2: `rocketmq.consumer.*`), its SCA binder's rules and the Spring
    Cloud Stream binders its build files put on the class path (None: no build file)."""
    mine = versions_for(module, versions)
    binder = sca_binder(mine.get(SCA_STREAM))
    if builds is not None:
        binder = replace(binder, classpath=builds.binders(module))
    stream: Builder = partial(stream_bindings, binder=binder)
    builders = {**BUILDERS, "stream": stream}
    if wants_legacy_pull(module, versions):
        del builders["pull-consumer"]
        builders["legacy-pull"] = legacy_pull_consumer
    return builders


def adjust_config_consumers(consumers: Sequence[Consumer], module: str, versions: Versions) -> list[Consumer]:
    """Instance names of config-declared consumers by the module's versions."""
    mine = versions_for(module, versions)
    out: list[Consumer] = []
    for c in consumers:
        if c.client is ClientFamily.SPRING_CLOUD_STREAM:
            version = mine.get(SCA_STREAM)
            if version is not None and version.known:
                name = binder_instance_name(version) or Value.default(
                    "DEFAULT", f"SCA binder {version.value} keeps the client default (no ACL keys)"
                )
                c = c.model_copy(update={"instance_name": name})
            elif c.instance_name is not None:  # new-style binder keys (2.2.7+), version unknown
                c = c.model_copy(update={"instance_name": binder_instance_name(None)})
        elif c.client is ClientFamily.SPRING_LITE_PULL and HIDDEN_450 in c.notes:
            c = c.model_copy(
                update={"instance_name": listener_instance_name(spring_version(mine), Value.default("DEFAULT"))}
            )
        out.append(c)
    return out


def _views(env: str, profiles: Sequence[str], views: Mapping[str, View]) -> list[View]:
    """The views a consumer of environment `env` runs with (every profile for env "")."""
    if env:
        return [views.get(env, views[BASE])]
    return [views[p] for p in (BASE, *profiles) if p in views]


def _disabled(c: Consumer, view: View) -> bool:
    group, topic = c.group.value, c.subscriptions[0].topic.value if c.subscriptions else None
    if group is None or topic is None:
        return False
    cv = view.get(canonical(f"rocketmq.consumer.listeners.{group}.{topic}"))
    return cv is not None and cv.value.strip().lower() == "false"


def adjust_listener(
    c: Consumer, module: str, profiles: Sequence[str], views: Mapping[str, View], versions: Versions
) -> Consumer | None:
    """A rocketmq-spring listener as its version and config make it; None when the config disables it."""
    if c.client is not ClientFamily.SPRING_LISTENER:
        return c
    seen = _views(c.environment, profiles, views) if views else []
    if seen and all(_disabled(c, v) for v in seen):
        return None
    notes = list(c.notes)
    if seen and any(_disabled(c, v) for v in seen):
        notes.append(
            f"rocketmq.consumer.listeners.{c.group.value}.{c.subscriptions[0].topic.value}=false disables this listener in some profiles only"
        )
    spring = spring_version(versions_for(module, versions))
    update: dict[str, object] = {"instance_name": listener_instance_name(spring, c.instance_name)}
    if c.namespace is None and seen and consumer_namespace_applies(spring):
        ns = config_value(seen[0], LEGACY + "namespace")
        if ns is not None and ns.value != "":
            update["namespace"] = ns
    trigger = legacy_pull_trigger(spring)
    hit = lite_pull_trigger(seen[0], LEGACY) if trigger is not False and seen else None
    if hit is not None and hit[1].value == c.group.value:
        if trigger is None:
            notes.append(
                NOTE_450
                + "; the rocketmq-spring version is not known from the build files, so it is not reported as a member"
            )
        elif spring is not None:
            notes.append(
                f"rocketmq-spring {spring.value} (#450): the hidden DefaultLitePullConsumer of rocketmq.consumer.group/topic "
                "joins this group as a second member (reported at its config line)"
            )
    update["notes"] = tuple(notes)
    return c.model_copy(update=update)
