"""Spring `@ConditionalOnProperty` on the class that declares or starts a consumer, judged against
the module's committed config.

A class whose condition is false in every profile of its module's config is never a bean, so the
consumers it declares or starts never run (`running.never`: listed, judged by no rule). Spring's
`OnPropertyCondition`: each name (`name` or `value`, after `prefix`) must be set and equal
`havingValue` ignoring case, or, without `havingValue`, be anything but `false` (`matchIfMissing`
only decides a name that is not set, which is left "may run" below).

What is not known stays "may run": a property the config does not set (the environment or the
command line may), a value with an unresolved placeholder, a shared module's key its applications
set differently, an array of names, a condition on another annotation (`@ConditionalOnBean`, a
profile) or on a method.
"""

from __future__ import annotations

from subguard.extract.java.facts import AnnotationUse
from subguard.extract.java.resolve import Symbols, Where
from subguard.extract.spring.env import BASE, canonical, resolve
from subguard.extract.spring.extractor import ModuleConfig

ANNOTATION = "ConditionalOnProperty"


def inactive(where: Where, module: ModuleConfig | None, symbols: Symbols) -> str:
    """Why the class `where` names, or a class it is nested in, is never a bean under the module's
    config ("" when it may be one)."""
    if module is None:
        return ""
    parts = where.class_name.split(".")
    enclosing = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    for cls in where.facts.classes:
        if cls.name not in enclosing:
            continue
        for mark in cls.marks:
            if mark.name.rsplit(".", 1)[-1] == ANNOTATION:
                why = _never_holds(mark, Where(where.path, where.facts, cls.name), module, symbols)
                if why:
                    return why
    return ""


def _never_holds(mark: AnnotationUse, where: Where, module: ModuleConfig, symbols: Symbols) -> str:
    elements = dict(mark.elements)
    named = elements.get("name") or elements.get("value")
    if named is None:
        return ""
    name = symbols.string_value(named, where).value
    prefix = symbols.string_value(elements["prefix"], where).value if "prefix" in elements else ""
    having = symbols.string_value(elements["havingValue"], where).value if "havingValue" in elements else ""
    if not name or prefix is None or having is None:
        return ""
    key = f"{prefix.rstrip('.')}.{name}" if prefix else name
    seen: list[str] = []
    for profile in (BASE, *module.profiles):
        cv = module.views.get(profile, {}).get(canonical(key))
        if cv is None or cv.differs:
            return ""  # not set (the environment may set it) or set differently by the applications
        value = resolve(cv.value, module.views[profile]).value if "${" in cv.value else cv.value
        if value is None:
            return ""
        holds = value.lower() == having.lower() if having else value.lower() != "false"
        if holds:
            return ""
        seen.append(f"{cv.path}:{cv.line} sets '{value}'")
    wanted = f" = {having}" if having else ""
    return f"never runs: its class is @ConditionalOnProperty({key}{wanted}), which the config does not meet ({'; '.join(dict.fromkeys(seen))})"
