"""Version-specific behaviour of the RocketMQ client integrations, from the versions in build files.

Facts checked in the sources (rocketmq-semantics §5.5, §7.2, §7.3):

- rocketmq-spring `RocketMQUtil.getInstanceName`, called by `DefaultRocketMQListenerContainer` for
  every listener: 2.2.0 `nameServer@pid`; 2.2.1 and 2.2.2 `nameServer@pid@nanoTime`; from 2.2.3
  (PR #466) the annotation's `instanceName` (default `DEFAULT`). 2.1.x: `ak|sk|group|pid` with
  ACL only, else the client default.
- rocketmq-spring 2.2.0-2.2.2 `RocketMQAutoConfiguration.defaultLitePullConsumer` is conditional
  on `rocketmq.name-server` + `rocketmq.consumer.group` + `rocketmq.consumer.topic` (#450); 2.2.3
  renamed the trigger to `rocketmq.pull-consumer.*`. 2.1.x has no such bean.
- rocketmq-spring applies `rocketmq.consumer.namespace` to listeners without their own
  `namespace` from 2.2.3 (`RocketMQUtil.getNamespace`).
- SCA binder `RocketMQUtils.getInstanceName`: `[ak|sk|]group|pid` in 2.2.7-2.2.10-RC1,
  2021.0.1.0-2021.0.4.0 and 2022.0.0.0-RC1; `[ak|]group|pid|nanoTime(base36)` from 2.2.10-RC2,
  2021.0.5.0 and 2022.0.0.0. Up to 2.2.6 / 2021.1 the binder keeps the client default unless ACL
  keys are set (`ak|sk|topic|pid|pid`).
- SCA binder `RocketMQConsumerProperties`: `tags`/`sql`/`broadcasting`/`orderly` up to 2.2.6 and
  2021.1, `subscription`/`messageModel`/`push.orderly` from 2.2.7 and 2021.0.1.0;
  `RocketMQMessageChannelBinder.createConsumerEndpoint` throws for an empty binding group up to
  2.2.7 / 2021.0.1.0 and uses `anonymous_<destination>` from 2.2.8, 2021.0.4.0 and 2022.0.0.0-RC1.

A pid alone is not judged: in a container it is often the same on every start (PID 1), outside
it is not. A nanoTime makes the name change on every start: such names are recorded as unknown
values marked `UNSTABLE` (see `unstable_instance`), which the SG302 logic reads as "changes".
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from subguard.core.model import Value

ROCKETMQ_CLIENT = "org.apache.rocketmq:rocketmq-client"
ROCKETMQ_CLIENT_JAVA = "org.apache.rocketmq:rocketmq-client-java"
ROCKETMQ_SPRING = "org.apache.rocketmq:rocketmq-spring-boot-starter"
ROCKETMQ_SPRING_CORE = "org.apache.rocketmq:rocketmq-spring-boot"
ROCKETMQ_SPRING_V5 = "org.apache.rocketmq:rocketmq-v5-client-spring-boot-starter"
SCA_STREAM = "com.alibaba.cloud:spring-cloud-starter-stream-rocketmq"
SCA_BOM = "com.alibaba.cloud:spring-cloud-alibaba-dependencies"
ARTIFACTS = frozenset(
    {ROCKETMQ_CLIENT, ROCKETMQ_CLIENT_JAVA, ROCKETMQ_SPRING, ROCKETMQ_SPRING_CORE, ROCKETMQ_SPRING_V5, SCA_STREAM}
)

UNSTABLE = "[changes on every restart]"

_NUM = re.compile(r"\d+")


def unstable_instance(reason: str) -> Value:
    """An instance name not known statically but known to change on every start."""
    return Value.unknown(f"{reason} {UNSTABLE}")


def is_unstable(value: Value | None) -> bool:
    return value is not None and value.value is None and value.detail.endswith(UNSTABLE)


def numbers(version: str) -> tuple[int, ...]:
    """The leading numeric parts of a version: '2.2.10-RC2' -> (2, 2, 10), '2021.0.5.0' -> (2021, 0, 5, 0)."""
    head = re.split(r"[-_]|\.(?=[A-Za-z])", version.strip(), maxsplit=1)[0]
    return tuple(int(p) for p in head.split(".") if p.isdigit())


def _qualifier(version: str) -> str:
    m = re.search(r"[-_.]([A-Za-z][\w.-]*)$", version.strip())
    return m.group(1).upper() if m else ""


def spring_version(versions: Mapping[str, Value]) -> Value | None:
    """The rocketmq-spring version of a module (the starter, else the core artifact)."""
    return versions.get(ROCKETMQ_SPRING) or versions.get(ROCKETMQ_SPRING_CORE)


def _known(v: Value | None) -> tuple[int, ...] | None:
    if v is None or v.value is None:
        return None
    nums = numbers(v.value)
    return nums if len(nums) >= 2 else None


def legacy_pull_trigger(version: Value | None) -> bool | None:
    """Does rocketmq-spring create a lite-pull bean from `rocketmq.consumer.group/topic`? None: unknown."""
    nums = _known(version)
    if nums is None:
        return None
    return (2, 2, 0) <= nums[:3] < (2, 2, 3)


def consumer_namespace_applies(version: Value | None) -> bool:
    """`rocketmq.consumer.namespace` reaches listeners from 2.2.3 (assumed when the version is unknown)."""
    nums = _known(version)
    return nums is None or nums[:3] >= (2, 2, 3)


def listener_instance_name(version: Value | None, written: Value | None) -> Value | None:
    """The instance name a rocketmq-spring listener really uses; `written` when the version says so."""
    nums = _known(version)
    if nums is None or version is None:
        return written
    where = f"rocketmq-spring {version.value}"
    if nums[:3] == (2, 2, 0):
        return Value.unknown(f"{where} sets instanceName to nameServer@pid (the pid is not known statically)")
    if (2, 2, 1) <= nums[:3] < (2, 2, 3):
        return unstable_instance(f"{where} sets instanceName to nameServer@pid@nanoTime (#458)")
    return written


def binder_consumer_rules(version: Value | None) -> tuple[bool, bool] | None:
    """(reads the new consumer keys, gives an empty group `anonymous_<destination>`) of an SCA binder
    version; None when the version is not known or its rules are not."""
    nums = _known(version)
    if nums is None:
        return None
    major = nums[0]
    if major >= 2022:
        return True, True
    if major == 2021:
        return (False, False) if nums[:2] == (2021, 1) else (True, nums[:3] >= (2021, 0, 4))
    if major == 2020 or nums[:2] < (2, 2):
        return False, False
    if nums[:2] == (2, 2) and len(nums) >= 3:
        return nums[2] >= 7, nums[2] >= 8
    return None


def binder_instance_name(version: Value | None) -> Value | None:
    """The instance name the SCA binder gives its consumers; None for the client default (no ACL)."""
    nums = _known(version)
    if nums is None or version is None or version.value is None:
        return Value.unknown(
            "SCA binder version not known from the build files: 2.2.7+ sets instanceName to "
            "[ak|]group|pid, and 2.2.10/2021.0.5.0/2022.0.0.0+ add a nanoTime"
        )
    where = f"spring-cloud-starter-stream-rocketmq {version.value}"
    qual = _qualifier(version.value)
    major = nums[0]
    if major >= 2022:
        timed = nums[:4] >= (2022, 0, 0, 0) and not (nums[:4] == (2022, 0, 0, 0) and qual.startswith("RC"))
    elif major == 2021:
        if nums[:2] == (2021, 1):
            return None
        timed = nums[:3] >= (2021, 0, 5)
    elif nums[:2] == (2, 2) and len(nums) >= 3:
        if nums[2] < 7:
            return None
        timed = nums[2] > 10 or (nums[2] == 10 and qual != "RC1")
    elif nums[:2] < (2, 2):
        return None
    else:
        return Value.unknown(f"{where}: instance name rule not known for this version")
    if timed:
        return unstable_instance(f"{where} sets instanceName to [ak|]group|pid|nanoTime")
    return Value.unknown(f"{where} sets instanceName to [ak|sk|]group|pid (the pid is not known statically)")


def versions_for(module: str, modules: Mapping[str, Mapping[str, Value]]) -> Mapping[str, Value]:
    """A module's RocketMQ dependency versions: its own build file's, else the nearest ancestor's."""
    folder = module
    while True:
        if folder in modules:
            return modules[folder]
        if not folder:
            return {}
        folder = folder.rpartition("/")[0]
