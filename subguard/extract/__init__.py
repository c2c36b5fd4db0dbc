"""Extractor registry. Order matters: later extractors see earlier results in `RepoContext.prior`
(Spring config before Java, so placeholders resolve; manifests last)."""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:  # kept out of the imports: a parse module of one extractor loads none of the models
    from collections.abc import Sequence

    from subguard.extract.base import Extractor

# name -> "module:attribute"; imported lazily so that `subguard --version` stays fast.
REGISTRY: dict[str, str] = {
    "python": "subguard.extract.python.extractor:EXTRACTOR",
    "build": "subguard.extract.build:EXTRACTOR",  # before spring and java: they read its versions
    "spring": "subguard.extract.spring.extractor:EXTRACTOR",
    "java": "subguard.extract.java.extractor:EXTRACTOR",
    "manifests": "subguard.extract.manifests.extractor:EXTRACTOR",  # keep last: claims every YAML nobody else took
}

# name -> the byte strings a file must hold for the extractor to be given it (empty: every file it
# claims). Kept here, beside the registry, so that the run memo can tell whether an edited file
# would reach an extractor without importing it (`subguard.scan.runmemo`).
NEEDLES: dict[str, tuple[bytes, ...]] = {
    "python": (b"rocketmq",),
    "build": (b"rocketmq", b"spring-cloud-alibaba"),
    "spring": (),
    # ONSFactory and its Spring beans' package: the Aliyun ONS client (com.aliyun.openservices.ons.api)
    # names no RocketMQ package; RocketMq: the casing of many in-house classes (RocketMqConsumerContainer)
    "java": (b"rocketmq", b"RocketMQ", b"RocketMq", b"ONSFactory", b"openservices.ons"),
    "manifests": (),  # on purpose: see `subguard.extract.manifests.extractor`
}


# name -> (the memo kind of its full parse, the byte strings of which a file must hold one to be
# parsed in full) for an extractor whose output for a file it was given and parsed in full follows
# from that parse alone (what it reads of other files is recorded apart: `Looked`). The run memo
# replays an edit of such a file that leaves its parse as it was (`subguard.scan.unread.same_parses`).
PARSED_IN_FULL: dict[str, tuple[str, tuple[bytes, ...]]] = {
    "python": ("python", (b"PushConsumer", b"PullConsumer", b"SimpleConsumer")),
}

# name -> the endings of the file names the extractor claims, for one whose claim is by ending alone:
# the repository's paths with them are listed once per scan, and ahead by a resident server for a
# tree it watches (`subguard.scan.discover.Index.ending`)
SUFFIXES: dict[str, tuple[str, ...]] = {"python": (".py", ".pyi")}


def load_extractors(names: Sequence[str] | None = None) -> list[Extractor]:
    chosen = list(REGISTRY) if names is None else list(names)
    out: list[Extractor] = []
    for name in chosen:
        module, _, attr = REGISTRY[name].partition(":")
        out.append(getattr(importlib.import_module(module), attr))
    return out
