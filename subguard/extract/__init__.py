"""Extractor registry. Order matters: later extractors see earlier results in `RepoContext.prior`
(Spring config before Java, so placeholders resolve; manifests last)."""

from __future__ import annotations

import importlib
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


def load_extractors(names: Sequence[str] | None = None) -> list[Extractor]:
    chosen = list(REGISTRY) if names is None else list(names)
    out: list[Extractor] = []
    for name in chosen:
        module, _, attr = REGISTRY[name].partition(":")
        out.append(getattr(importlib.import_module(module), attr))
    return out
