"""Spring `${key}` / `${key:default}` resolution of Java-declared values, per module and profile.

The Spring extractor exposes `facts["modules"]` (module dir -> `ModuleConfig`). A Java file uses the
config of its own module, else of the nearest ancestor module that has one. A set of values that
resolves the same in every profile gives one variant (environment ""); otherwise one variant per
profile (environment = profile).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from subguard.core.model import Location, Resolution, Value
from subguard.deploy.service import module_dir
from subguard.extract.spring.env import BASE, ConfigValue, config_text_value, resolve
from subguard.extract.spring.extractor import ModuleConfig

# the detail of a value read from a `@ConfigurationProperties` class's field (resolve.py)
BOUND_PROPERTY = "@ConfigurationProperties prefix"


def module_for(path: str, modules: Mapping[str, ModuleConfig], paths: frozenset[str]) -> ModuleConfig | None:
    """The Spring config a source file sees: its module's, else the nearest ancestor's."""
    folder = module_dir(path, paths)
    while True:
        if folder in modules:
            return modules[folder]
        if not folder:
            return None
        folder = module_dir(posixpath.join(posixpath.dirname(folder), "x"), paths) if "/" in folder else ""


def apply(
    value: Value, config: Mapping[str, ConfigValue], where: str, literal_note: str, keep_text: bool = False
) -> Value:
    """Resolve the placeholders of a known value against one profile's config. With `keep_text` (an
    annotation attribute rocketmq-spring resolves leniently), an unresolvable placeholder stays as the
    text Spring binds, with its keys; otherwise (a strict `@Value`) it is unknown, with the reason."""
    if value.value is None or "${" not in value.value:
        return value
    if keep_text:
        return config_text_value(value.value, config, value.location, where=f" {where}")
    res = resolve(value.value, config)
    if res.value is None:
        bound = BOUND_PROPERTY in (value.detail or "")  # a @ConfigurationProperties field: null when unset
        note = f"set at run time or left null ({value.detail})" if bound else literal_note
        return Value.unknown(
            f"placeholder ${{{res.missing[0]}}} is not set in the Spring config {where}; {note}", value.location
        )
    loc = value.location
    if res.source is not None:
        loc = Location(path=res.source.path, line=res.source.line, column=res.source.column)
    detail = ",".join(res.keys) + (f" (default used for {','.join(res.defaulted)})" if res.defaulted else "")
    return Value(value=res.value, resolution=Resolution.PLACEHOLDER, detail=detail, location=loc)


def variants(
    values: Mapping[str, Value | None], module: ModuleConfig | None, literal_note: str, keep_text: bool = False
) -> list[tuple[str, dict[str, Value | None]]]:
    """(environment, resolved values) pairs; one pair with environment "" unless profiles disagree."""
    if not any(v is not None and v.value is not None and "${" in v.value for v in values.values()):
        return [(BASE, dict(values))]
    if module is None:
        return [
            (
                BASE,
                {
                    k: apply(v, {}, "(no Spring config found for this module)", literal_note, keep_text) if v else v
                    for k, v in values.items()
                },
            )
        ]
    out: dict[str, dict[str, Value | None]] = {}
    broken = f" ({', '.join(module.failed)} could not be parsed: see SG901)" if module.failed else ""
    for profile in (BASE, *module.profiles):
        where = f"of module '{module.module or '.'}'" + (f" (profile {profile})" if profile else "") + broken
        view = module.views[profile]
        out[profile] = {k: apply(v, view, where, literal_note, keep_text) if v else v for k, v in values.items()}
    keyed = {p: tuple((k, v.value if v else None) for k, v in vals.items()) for p, vals in out.items()}
    if len(set(keyed.values())) == 1:
        return [(BASE, out[BASE])]
    return [(p, vals) for p, vals in out.items() if p != BASE or not module.profiles]
