"""Immutable records shared by every stage: extractors produce them, rules and reporters read them."""

from __future__ import annotations

import hashlib
import re
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict


class Record(BaseModel):
    """Base of every record: frozen, no unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Location(Record):
    """A place in a scanned file. `path` is POSIX and relative to the scanned root; line/column 1-based."""

    path: str
    line: int = 1
    column: int = 1
    end_line: int | None = None
    end_column: int | None = None
    repo: str = ""
    # (first, last) line of the declaration the location sits in, when it spans several lines (a
    # multi-line listener annotation or subscribe call): an inline waiver on any of them applies
    span: tuple[int, int] | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


def in_declaration(loc: Location, first: int, last: int) -> Location:
    """`loc` marked as part of the declaration on lines first..last (unchanged for one line, or when
    `loc` lies outside it, e.g. a parameter bound at a call site elsewhere)."""
    return loc.model_copy(update={"span": (first, last)}) if first < last and first <= loc.line <= last else loc


class Resolution(str, Enum):
    """How a value was obtained. Anything not statically known is DYNAMIC (unknown, never guessed)."""

    LITERAL = "literal"
    CONSTANT = "constant"  # module/class constant in the same file
    IMPORTED_CONSTANT = "imported_constant"  # constant from another file of the same repo
    PLACEHOLDER = "placeholder"  # Spring ${key} / ${key:default} resolved against config
    ENV_DEFAULT = "env_default"  # os.getenv("X", "default"): the default, env var name in `detail`
    OPTION_DEFAULT = "option_default"  # a command-line option's default (argparse default=): the option in `detail`
    DEFAULT = "default"  # not written anywhere: the client library's default applies
    DYNAMIC = "dynamic"  # unknown; `detail` says why


class Value(Record):
    """A possibly-unknown string value with its provenance.

    `value` is None exactly when the value is unknown (resolution DYNAMIC, or a placeholder without
    a value); `detail` then says why. For known values `detail` names the source (constant name,
    env var, placeholder key) when there is one.
    """

    value: str | None = None
    resolution: Resolution = Resolution.LITERAL
    detail: str = ""
    location: Location | None = None

    @property
    def known(self) -> bool:
        return self.value is not None

    @classmethod
    def literal(cls, value: str, location: Location | None = None) -> Value:
        return cls(value=value, resolution=Resolution.LITERAL, location=location)

    @classmethod
    def default(cls, value: str, detail: str = "client default") -> Value:
        return cls(value=value, resolution=Resolution.DEFAULT, detail=detail)

    @classmethod
    def unknown(cls, reason: str, location: Location | None = None) -> Value:
        return cls(value=None, resolution=Resolution.DYNAMIC, detail=reason, location=location)


class ExpressionType(str, Enum):
    TAG = "TAG"
    SQL92 = "SQL92"


class MessageModel(str, Enum):
    CLUSTERING = "CLUSTERING"
    BROADCASTING = "BROADCASTING"


class ConsumeMode(str, Enum):
    CONCURRENTLY = "CONCURRENTLY"
    ORDERLY = "ORDERLY"


class ClientFamily(str, Enum):
    """Which client library and API declared the consumer; decides filtering and id semantics."""

    JAVA_PUSH_4X = "java-push-4x"  # DefaultMQPushConsumer (remoting, 4.x and 5.x)
    JAVA_LITE_PULL = "java-lite-pull"  # DefaultLitePullConsumer
    JAVA_PULL = "java-pull"  # DefaultMQPullConsumer
    JAVA_5X = "java-5x"  # gRPC PushConsumer/SimpleConsumer builders
    SPRING_LISTENER = "spring-listener"  # rocketmq-spring @RocketMQMessageListener (push underneath)
    SPRING_LITE_PULL = "spring-lite-pull"  # rocketmq-spring rocketmq.pull-consumer.* bean
    SPRING_5X = "spring-5x"  # rocketmq-v5-client-spring-boot
    SPRING_CLOUD_STREAM = "spring-cloud-stream"  # SCA binder (push underneath)
    PYTHON_NATIVE_4X = "python-native-4x"  # rocketmq-client-python 2.x (C++ core)
    PYTHON_ROCKETMQ_04 = "python-rocketmq-0.4"  # PyPI rocketmq 0.4.x (C++ core)
    PYTHON_GRPC_5X = "python-grpc-5x"  # rocketmq-python-client 5.x


# Families whose pulls carry their own expression (broker filters with it, not the group table).
OWN_EXPRESSION_FAMILIES = frozenset(
    {
        ClientFamily.JAVA_LITE_PULL,
        ClientFamily.JAVA_PULL,
        ClientFamily.SPRING_LITE_PULL,
        ClientFamily.PYTHON_NATIVE_4X,
        ClientFamily.PYTHON_ROCKETMQ_04,
    }
)
# gRPC / pop consumers: per-request filter with group-shared progress.
POP_FAMILIES = frozenset({ClientFamily.JAVA_5X, ClientFamily.SPRING_5X, ClientFamily.PYTHON_GRPC_5X})
# C++-core clients: heartbeat codeSet computed with atoi (0 for non-numeric tags).
CPP_FAMILIES = frozenset({ClientFamily.PYTHON_NATIVE_4X, ClientFamily.PYTHON_ROCKETMQ_04})


class Subscription(Record):
    """One `subscribe(topic, expression)` as declared.

    `expression` is exactly as written (untrimmed). `tags` is the broker's parse, order kept as
    written, duplicates dropped; empty for `*`, SQL92, or an unknown expression.
    """

    topic: Value
    expression: Value
    expression_type: ExpressionType = ExpressionType.TAG
    tags: tuple[str, ...] = ()
    location: Location
    # the subscriptions of this topic written in branches of one another (`if` / `else`, `switch`
    # cases), in order, when the consumer registers one of them, chosen at run time: `expression` is
    # then unknown, and `expression_type` too when theirs differ (`type_known`)
    alternatives: tuple[Subscription, ...] = ()

    @property
    def type_known(self) -> bool:
        """Whether `expression_type` is the type registered: not when the alternatives' types differ."""
        return len({s.expression_type for s in self.alternatives}) <= 1


class StartupFailure(Record):
    """Why a declaration is refused when the application starts, and the value that causes it."""

    reason: str
    location: Location | None = None


class Consumer(Record):
    """One consumer instance as declared in code or config."""

    consumer_id: str
    group: Value
    subscriptions: tuple[Subscription, ...] = ()
    # earlier subscribe() calls of a topic that a later call on the same consumer overwrote
    overridden: tuple[Subscription, ...] = ()
    message_model: Value = Value.default(MessageModel.CLUSTERING.value)
    consume_mode: Value = Value.default(ConsumeMode.CONCURRENTLY.value)
    client: ClientFamily
    service: str = ""
    environment: str = ""
    # whether `environment` is production, as the consumer's own repository's config classifies it
    # (set where a consumer leaves its repository's config behind, as in the audit); None: not classified
    environment_production: bool | None = None
    repo: str = ""
    name_server: Value | None = None
    namespace: Value | None = None
    instance_name: Value | None = None
    client_ip: Value | None = None
    consume_from_where: Value | None = None
    location: Location
    notes: tuple[str, ...] = ()
    # False when the consumer registers no subscription with the broker (a pull consumer without
    # registered topics, a consumer in assign mode): it is listed, but no group rule counts it
    registers: bool = True
    # the parameters of the enclosing function or class that its unknown values come from: a template
    # (a factory, a wrapper, a framework container), not a declaration. Its instances are the call
    # sites, annotations or config that feed it; the template itself is listed, never judged or noted
    template: tuple[str, ...] = ()
    # why the client or its framework refuses this declaration at startup (an enum value rocketmq-spring
    # reads case-sensitively, a listener class that implements no listener interface, ...): it never
    # runs, so it is no group member; SG906 reports it
    startup_failure: StartupFailure | None = None
    # why the code provably never runs it ("" when it may run): a test asserts that its every start()
    # throws, or it is a listener-annotated class that can never be a bean. Listed, never judged
    never_runs: str = ""
    # the construction runs once per item of something only known at run time (in a loop or lambda,
    # or a helper called from one): one declaration, possibly several consumers, which can share a group
    repeated: bool = False
    # the services of the repo's modules that have this consumer's module on their class path (Maven
    # or Gradle dependencies, directly or not): a deployment of one of them runs it
    hosted_by: tuple[str, ...] = ()

    @property
    def model(self) -> str | None:
        return self.message_model.value


class Mount(Record):
    """A volume mount of a container; `persistent` is None when the volume kind is not known."""

    path: str
    volume: str = ""
    volume_kind: str = ""  # persistentVolumeClaim, emptyDir, hostPath, named, bind, image-volume, ...
    persistent: bool | None = None


class Deployment(Record):
    """What a manifest says about how a service runs."""

    deployment_id: str
    service: str
    kind: str  # Deployment, StatefulSet, DaemonSet, Job, CronJob, Pod, compose, Dockerfile, helm-values
    name: str = ""
    namespace: str = ""
    environment: str = ""
    repo: str = ""
    container: bool = True
    image: str = ""
    labels: tuple[tuple[str, str], ...] = ()
    jvm_options: tuple[tuple[str, str], ...] = ()  # -Dkey=value, in order
    env: tuple[tuple[str, str], ...] = ()
    mounts: tuple[Mount, ...] = ()
    instance_name: Value | None = None
    client_ip: Value | None = None
    replicas: int | None = None
    # how the workload replaces its pods when its template changes: Deployment `spec.strategy.type`
    # (RollingUpdate when not written), StatefulSet/DaemonSet `spec.updateStrategy.type` (RollingUpdate
    # when not written) or OnDelete; "" when the manifest kind has none or it is not known
    strategy: str = ""
    location: Location
    notes: tuple[str, ...] = ()

    def jvm_option(self, key: str) -> str | None:
        found = [v for k, v in self.jvm_options if k == key]
        return found[-1] if found else None


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "note": 1}[self.value]

    def meets(self, fail_on: str) -> bool:
        """At or above a `--fail-on` threshold (error | warning | note); `none`/`never`: never."""
        return fail_on in _SEVERITIES and self.rank >= Severity(fail_on).rank


_SEVERITIES = frozenset(s.value for s in Severity)


class Related(Record):
    location: Location
    message: str = ""


class Suppression(Record):
    kind: str  # inline | config | baseline
    reason: str = ""
    location: Location | None = None


# key in Finding.properties: "test", "example" or "placeholder" when only test or example code (or a
# placeholder group name that samples use) is involved; set by rules.code_scope
CODE_SCOPE = "code"
# key in Finding.properties of a group finding confined to one sample of example code (the group
# map's sample: `rules.code_scope.sample_of`); its members are that sample's only
SAMPLE = "sample"
# what every inline waiver comment holds (`subguard.rules.suppress`), matched without regard to ASCII
# case: `WAIVER_NEEDLE in data.lower()`, as a bytes regex that needs no lowered copy
WAIVER_NEEDLE = b"subguard"
WAIVER_PATTERN = b"(?i)" + re.escape(WAIVER_NEEDLE)
# keys in Finding.properties of the change rules (SG6xx, `check --base`): the base revision as
# (("ref", REF), ("commit", SHA)), and the before/after rows (member, topic, before, after)
BASE_REVISION = "base"
BEFORE_AFTER = "change"
# key in Finding.properties of a fixable finding (`check` with a SARIF report): its fix, as
# pairs ("description", str), ("safety", "safe"|"unsafe"), ("reasons", (str, ...)) and ("replacements",
# ((Location of the replaced characters, new text), ...)): hashable, like every Finding
FIX = "fix"
# key in Finding.properties of findings judged with an org map (`check --org-map`): which related
# locations are rows of the map, and the day it was written, as (("date", "YYYY-MM-DD"), ("repos", (REPO, ...)))
ORG_MAP = "org_map"


class Finding(Record):
    """A rule's verdict on one subject. The fingerprint never contains line numbers."""

    rule: str
    severity: Severity
    message: str
    location: Location
    related: tuple[Related, ...] = ()
    group: str = ""
    topic: str = ""
    fingerprint: str = ""
    suppressed: Suppression | None = None
    impact: str = ""
    properties: tuple[tuple[str, Any], ...] = ()


def fingerprint(*parts: str) -> str:
    """Stable, line-free fingerprint from identifying parts (rule id, group, topic, path, ...)."""
    digest = hashlib.sha256(
        "\x1f".join(parts).encode("utf-8", "surrogatepass")
    ).hexdigest()  # scanned text may hold lone surrogates
    return digest[:32]


class FileStatus(str, Enum):
    PARSED = "parsed"
    SKIPPED = "skipped"
    FAILED = "failed"


class FileRecord(Record):
    """What happened to one discovered file: exactly one status, with a reason unless parsed."""

    path: str
    status: FileStatus
    reason: str = ""
    extractor: str = ""
    repo: str = ""
    size: int = 0


class RuleDoc(Record):
    """A rule's identity and documentation, from its policy file: what reporters and `explain` show."""

    id: str
    name: str
    severity: Severity
    scope: str
    summary: str = ""  # one line (SARIF shortDescription)
    what: str = ""  # "What it does"
    why: str = ""  # "Why is this bad?"
    example: str = ""
    instead: str = ""  # "Use instead"
    references: tuple[str, ...] = ()
    source: str = ""  # the policy file it came from
    fix: str = "none"  # none | safe | unsafe: whether `check --fix` can repair it, and how safely
    roles: tuple[str, ...] = ()  # consistency, diagnostic (see rules.policy.Role)
