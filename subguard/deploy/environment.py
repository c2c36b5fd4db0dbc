"""Environments and cluster identity: which environment a declaration runs in, whether that is
production, and whether two declarations talk to the same RocketMQ cluster.

Configuration (`environments:`) wins; otherwise names follow conventions (prod/production/prd,
staging/stg/uat, test/qa, dev/local, ...). Nothing here guesses silently: an unknown environment
or cluster is reported as unknown and the rules say what they assumed.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass

from subguard.core.config import Config
from subguard.core.model import Consumer, Value
from subguard.deploy.service import match_glob

# Conventional names -> canonical environment. Matched on whole names and on name tokens.
ALIASES: dict[str, str] = {
    **dict.fromkeys(("prod", "production", "prd", "live", "pro", "canary", "gray", "grey"), "prod"),
    **dict.fromkeys(("staging", "stg", "stage", "uat", "pre", "preprod", "pre-prod", "preview", "perf"), "staging"),
    **dict.fromkeys(("test", "testing", "qa", "sit", "fat", "ci", "e2e", "integration"), "test"),
    **dict.fromkeys(("dev", "develop", "development", "local", "sandbox", "daily"), "dev"),
}
# Tokens too ambiguous to mark an environment when they appear inside a longer name or a path.
_WHOLE_NAME_ONLY = frozenset({"pro", "live", "ci", "pre", "stage", "integration", "perf", "daily", "preview"})
_TOKEN_RE = re.compile(r"[^a-z0-9]+")
# File names whose suffix names an environment: application-prod.yml, values-prod.yaml, docker-compose.prod.yml
_SUFFIX_RE = re.compile(
    r"^(?:application|bootstrap|values|docker-compose|compose)[-._]([A-Za-z0-9]+)(?:[-._].*)?\.(?:ya?ml|properties)$"
)


@dataclass(frozen=True)
class EnvInfo:
    """An environment as far as it is known. `production` is None when it cannot be decided."""

    name: str
    canonical: str | None
    production: bool | None
    source: str  # config | convention | unknown


UNKNOWN_ENV = EnvInfo("", None, None, "unknown")


def canonical(name: str) -> str | None:
    """Canonical environment of a name by convention (prod, staging, test, dev), or None."""
    low = name.strip().lower()
    if low in ALIASES:
        return ALIASES[low]
    for token in _TOKEN_RE.split(low):
        if token in ALIASES and token not in _WHOLE_NAME_ONLY:
            return ALIASES[token]
    return None


def name_from_path(path: str) -> str | None:
    """An environment named by a path: a file suffix (values-prod.yaml) or a directory (k8s/prod/)."""
    base = posixpath.basename(path)
    match = _SUFFIX_RE.match(base)
    if match and canonical(match.group(1)):
        return match.group(1)
    segments = posixpath.dirname(path).split("/")
    for i in range(len(segments) - 1, -1, -1):
        low = segments[i].lower()
        if i > 0 and segments[i - 1] == "src":  # src/test/java is test code, not an environment
            continue
        if low in ALIASES and low not in _WHOLE_NAME_ONLY:
            return segments[i]
    return None


def classify(name: str, config: Config) -> EnvInfo:
    """Production or not for an environment name: config first, then conventions."""
    if not name:
        return UNKNOWN_ENV
    spec = config.environments.get(name)
    if spec is not None:
        return EnvInfo(name, canonical(name), spec.production, "config")
    for env_name, spec in config.environments.items():
        if name in spec.profiles or name in spec.namespaces:
            return EnvInfo(env_name, canonical(env_name), spec.production, "config")
    canon = canonical(name)
    if canon is None:
        return EnvInfo(name, None, None, "unknown")
    return EnvInfo(name, canon, canon == "prod", "convention")


def with_environment(consumer: Consumer, config: Config) -> Consumer:
    """The consumer with its environment as its repository's config classifies it, so that a group
    judged with another config (the audit's, across repositories) classifies it the same way."""
    info = environment_of(consumer, config)
    if info.source != "config":
        return consumer
    return consumer.model_copy(update={"environment": info.name, "environment_production": info.production})


def environment_of(consumer: Consumer, config: Config) -> EnvInfo:
    """The consumer's environment: its recorded one (profile or configured), else its path."""
    if consumer.environment and consumer.environment_production is not None:  # classified by its own repo's config
        return EnvInfo(consumer.environment, canonical(consumer.environment), consumer.environment_production, "config")
    if consumer.environment:
        return classify(consumer.environment, config)
    for name, spec in config.environments.items():
        if any(match_glob(consumer.location.path, g) for g in spec.paths):
            return EnvInfo(name, canonical(name), spec.production, "config")
    by_path = name_from_path(consumer.location.path)
    return classify(by_path, config) if by_path else UNKNOWN_ENV


def same_environment(a: EnvInfo, b: EnvInfo) -> bool:
    """Same name, or the same canonical environment by convention."""
    if a.name == b.name:
        return True
    return a.canonical is not None and a.canonical == b.canonical


# --- clusters -------------------------------------------------------------------------------------

DEFAULT_NAMESRV_PORT = "9876"


@dataclass(frozen=True)
class Cluster:
    """The cluster a consumer talks to: its name-server (or proxy endpoint) addresses, if known."""

    addresses: frozenset[str]
    text: str  # as written, for messages
    known: bool

    def overlaps(self, other: Cluster) -> bool | None:
        """True when both are known and share an address, False when both are known and disjoint,
        None when either is unknown (callers assume the same cluster and say so)."""
        if not (self.known and other.known):
            return None
        return bool(self.addresses & other.addresses)


UNKNOWN_CLUSTER = Cluster(frozenset(), "", False)


def normalise_address(addr: str) -> str:
    """`http://Host:9876/` -> `host:9876`; a bare host gets the default name-server port."""
    text = addr.strip().lower()
    text = re.sub(r"^[a-z]+://", "", text).rstrip("/")
    if text and ":" not in text:
        text = f"{text}:{DEFAULT_NAMESRV_PORT}"
    return text


def cluster_of(name_server: Value | None) -> Cluster:
    """Cluster identity from a name-server value; unresolved values and placeholders are unknown."""
    if name_server is None or not name_server.known or not name_server.value:
        return UNKNOWN_CLUSTER
    text = name_server.value
    if "${" in text or "$(" in text:
        return UNKNOWN_CLUSTER
    addresses = frozenset(a for a in (normalise_address(p) for p in re.split(r"[;,\s]+", text)) if a)
    return Cluster(addresses, text, bool(addresses)) if addresses else UNKNOWN_CLUSTER


def describe(clusters: Iterable[Cluster]) -> str:
    """Human text for a set of clusters in a message."""
    texts = sorted({c.text for c in clusters if c.known})
    return ", ".join(texts) if texts else "unknown"
