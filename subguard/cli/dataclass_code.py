"""The code of the methods `dataclasses` generates, kept between runs, in a process subguard's
command line owns.

Making a dataclass compiles the source text of each method it generates (`__init__`, `__repr__`,
`__eq__`; for a frozen class also `__setattr__`, `__delattr__` and `__hash__`), every time the class
is made: on Python 3.11, about 1.5 ms per frozen class on this VM, most of it in `compile`.
subguard's records, pydantic's and libcst's syntax tree are made of several hundred such classes:
measured here, a tenth of the imports of a `check` after an edit, and 0.35 s of the 0.6 s libcst's
import takes in the child that parses an edited file ahead (`subguard.scan.ahead`).

`install` gives the `dataclasses` module an `exec` of its own (a module global shadows the builtin
for that module alone). Given source text, it runs the code an earlier process of this interpreter
build compiled from the same text, when this process has it, else compiles the text as `exec`
would (`dont_inherit`: `dataclasses` has no `__future__` import whose flags `exec` would pass on)
and remembers it. So each class is made of the same code as without this module. `save` adds what
this process compiled to a signed file per interpreter build in the user's cache folder
(`subguard.core.signing`), read by the next `install`: the code is looked up by a digest of its
source text and unmarshalled only when asked for. A `dataclasses` that makes its methods another
way never calls it; a file that is missing, unreadable or not signed with the user's key is a miss.
"""

from __future__ import annotations

import builtins
import importlib
import marshal
import os
import sys
from types import CodeType

from subguard.core import signing

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

try:  # hashlib would load OpenSSL (~10 ms) for a digest the interpreter has built in
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

_KNOWN: dict[bytes, bytes] = {}  # digest of the source text -> marshalled code, as read
_NEW: dict[bytes, CodeType] = {}  # what this process compiled
_installed = False
_hits = 0  # methods made from code read from the file
_before: frozenset[str] = frozenset()  # the modules imported before `install`: their classes were not seen


def path() -> str:
    """This interpreter build's file (its version, cache tag and optimisation level)."""
    build = f"{sys.implementation.cache_tag}-{sys.hexversion:x}-O{sys.flags.optimize}"
    return os.path.join(signing.cache_home(), f"dataclass-code-{build}.marshal")


def _load(file: str) -> dict[bytes, bytes]:
    body = signing.read_sealed(file)
    if body is None:
        return {}
    try:
        table = marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if isinstance(k, bytes) and isinstance(v, bytes)}


def _digest(source: str) -> bytes:
    return blake2b(source.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _exec(source: Any, /, *args: Any, **kwargs: Any) -> None:
    """`exec` for `dataclasses`: source text runs as the code compiled from it (the other arguments
    are `exec`'s own)."""
    global _hits
    if isinstance(source, str):
        key = _digest(source)
        known = _KNOWN.get(key)
        code: Any = None
        if known is not None:
            try:
                code = marshal.loads(known)
            except (EOFError, ValueError, TypeError):
                code = None
            if isinstance(code, CodeType):
                _hits += 1
            else:
                code = None
        if code is None:
            code = _NEW.get(key)
        if code is None:
            code = _NEW[key] = compile(source, "<string>", "exec", dont_inherit=True)
        source = code
    builtins.exec(source, *args, **kwargs)


def install() -> None:
    """Read this build's file and give `dataclasses` the `exec` above (once per process)."""
    global _installed, _before
    if _installed:
        return
    _installed = True
    _before = frozenset(sys.modules)
    import dataclasses

    _KNOWN.update(_load(path()))
    dataclasses.exec = _exec  # type: ignore[attr-defined]


def save(modules: Sequence[str] = (), fetch: bool = False) -> None:
    """Add what this process compiled to this build's file, and note each of `modules` (what another
    process of the run imports: libcst, in the child that parses ahead) as in it once its classes
    are: when this process imported it since `install`, or, with `fetch` (that process ran, without
    them), by importing it here. A cache is an optimisation: a file that cannot be written is left
    as it is."""
    unseen = [name for name in modules if _note(name) not in _KNOWN and name not in _before]
    made = [name for name in unseen if name in sys.modules or fetch]
    if not _NEW and not made:
        return
    file = path()
    table = _load(file)
    noted = False
    for name in made:
        if _note(name) not in table:
            importlib.import_module(name)  # its classes: compiled now into `_NEW`, or earlier in this run
            table[_note(name)] = b""
            noted = True
    fresh = {key: code for key, code in _NEW.items() if key not in table}
    _NEW.clear()
    if not fresh and not noted:  # nothing the file lacks (a resident server's other runs wrote it)
        _KNOWN.update(table)
        return
    table.update({key: marshal.dumps(code) for key, code in fresh.items()})
    try:
        os.makedirs(os.path.dirname(file), exist_ok=True)
        signing.write_sealed(file, marshal.dumps(table))
    except OSError:
        return
    _KNOWN.update(table)


def _note(module: str) -> bytes:
    """The key under which the file notes that `module`'s classes are in it (the digest of no
    method's source text)."""
    return _digest(f"imported {module}")


def hits() -> int:
    """How many methods this process made from code read from the file."""
    return _hits
