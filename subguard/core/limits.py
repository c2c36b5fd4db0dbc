"""Resource limits for untrusted input, shared by every reader of scanned files and loaded config.

What is limited, and how:

- **File size**: `discover.DEFAULT_MAX_FILE_SIZE` / `max-file-size` in config (checked before reading).
- **YAML**: `subguard.core.yamlsafe.safe_yaml()` builds a pure-Python ruamel loader whose composer refuses documents nested
  deeper than `YAML_MAX_DEPTH` and documents whose aliases would expand to more than
  `YAML_MAX_ALIAS_EXPANSION` extra nodes ("billion laughs") or refer to themselves (recursive
  aliases). The loaded data still shares aliased nodes; the check is on the node graph, so it costs
  one pass over the composed nodes and no expansion. Violations raise `YamlLimitError`, a
  `MarkedYAMLError`, so every existing `except YAMLError` reports it with a line.
  Loaders never construct objects from tags: `typ="safe"` (SafeConstructor: unknown tags are an
  error) or `typ="rt"` (round-trip: tags stay inert data).
- **Per-file parse time**: `time_budget(seconds)` arms a SIGALRM interval timer when it runs on
  the main thread of a platform that has `signal.setitimer` (Linux, macOS) and raises
  `ParseTimeout` when the budget is spent, and again every `REFIRE_SECONDS` until the body has
  unwound: an exception raised while the interpreter runs a gc callback or a `__del__` is printed
  and dropped ("Exception ignored in ..."), so one alarm alone can be lost. The signal is
  delivered between Python bytecodes, so a
  single long call into a C extension (libcst's native parser, tree-sitter) finishes before the
  timeout is seen; those parsers are protected by depth guards instead. Elsewhere (worker threads,
  Windows) the budget is not enforced. `scan` applies it to every per-file parse (`RepoContext.memo`).
- **Recursion**: `RecursionError` raised while parsing one file is reported as that file's failure
  (see `scan`); parsers that overflow the C stack instead of raising are guarded by depth probes in
  their extractor (`py_parse.MAX_DEPTH`).
- **Garbage collection**: `gc_paused()` pauses the cyclic collector while a scan or the judging
  allocates its records: they make few cycles, and every collection their allocations trigger walks
  every live object again (the cache's state, the other revision's records).
"""

from __future__ import annotations

import gc
import pickle
import re
import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar, cast, get_args

import pydantic_core
from pydantic import BaseModel

from subguard.core.model import Record
from subguard.core.recordjson import json_of

T = TypeVar("T")
PARSE_TIME_BUDGET = 10.0  # seconds per file parse; `parse-timeout` in config


class ParseTimeout(BaseException):
    """A per-file parse ran over its time budget.

    A BaseException, like KeyboardInterrupt, so that a parser's broad `except Exception` cannot
    swallow it and keep running unbounded; `scan` catches it at the per-file boundary.
    """

    def __init__(self, seconds: float) -> None:
        super().__init__(f"parse took longer than the {seconds:g} s time budget")
        self.seconds = seconds


REFIRE_SECONDS = 0.05


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    if _armed:
        raise ParseTimeout(_armed[-1])


_armed: list[float] = []


def can_time_out() -> bool:
    """Whether `time_budget` is enforced here (main thread, platform with setitimer)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_budget(seconds: float) -> Iterator[None]:
    """Raise `ParseTimeout` in the body after `seconds` (see the module doc for where it applies).

    Nested budgets do not re-arm the timer: the outermost one governs. A handler someone else
    installed for SIGALRM is left alone (the budget is then not enforced).
    """
    if seconds <= 0 or _armed or not can_time_out():
        yield
        return
    previous = signal.getsignal(signal.SIGALRM)
    if previous not in (signal.SIG_DFL, signal.SIG_IGN, None):
        yield
        return
    signal.signal(signal.SIGALRM, _on_alarm)
    _armed.append(seconds)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds, REFIRE_SECONDS)  # re-fires until disarmed
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _armed.pop()
        signal.signal(signal.SIGALRM, previous)


class FileFailure(Exception):
    """One file's parse failed in a way its parser did not report (an exception, a timeout).

    Raised by `guard_memo` around a per-file parse so that `scan` can fail that file alone and
    run the extractor again over the others.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def describe(exc: BaseException) -> str:
    """A one-line reason for an unexpected exception: type, message and the innermost frame."""
    if isinstance(exc, ParseTimeout):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "too deeply nested to analyse (recursion limit)"
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" ({Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}{where}"


Memo = Callable[[str, str, bytes, Callable[[], Any]], Any]


def guard_memo(memo: Memo, seconds: float) -> Memo:
    """Wrap a `RepoContext.memo`: each per-file parse runs under `time_budget(seconds)`, and an
    exception escaping it (RecursionError, a parser bug, the timeout) becomes `FileFailure(path)`."""

    def guarded(kind: str, path: str, data: bytes, compute: Callable[[], Any]) -> Any:
        def run() -> Any:
            try:
                with time_budget(seconds):
                    return compute()
            except (Exception, ParseTimeout) as exc:  # attributed to the file, never lost
                raise FileFailure(path, describe(exc)) from exc

        return memo(kind, path, data, run)

    return guarded


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_UTF8 = re.compile(b"\xed[\xa0-\xbf][\x80-\xbf]")  # how pickle (surrogatepass) writes one


def scrub(value: T) -> T:
    """`value` with every lone surrogate in its strings replaced by U+FFFD.

    Scanned text can smuggle lone surrogates in through escapes ("\\ud800" in YAML, Python, Java or
    properties) or undecodable file names; they crash every UTF-8 encoder downstream (JSON, SARIF,
    fingerprints, the terminal). Pydantic models are rebuilt with `model_copy`, sharing everything
    that did not change; a value without surrogates is returned as is. To find that out, pydantic's
    JSON serializer (each model as what it is, not as its field's type) refuses a lone surrogate, at
    a third of a pickle's cost; a value it cannot write is pickled instead.
    """
    if _json_clean(value):
        return value
    try:
        if not _SURROGATE_UTF8.search(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)):
            return value
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        pass  # not picklable: walk it
    return cast(T, _walk(value, _no_surrogates))


def _json_clean(value: object) -> bool:
    """True when pydantic writes `value` as UTF-8 JSON: no string in it holds a lone surrogate (False
    also for a value it cannot write, a bytes value that is no UTF-8, a key that is no string). A
    sequence of one closed model class is written by the fields it declares (twice as fast), a
    record's JSON kept for the memo keys that read it later in the run (`subguard.core.recordjson`);
    anything else as what each model is."""
    items = value if isinstance(value, (tuple, list)) else (value,)
    kind = type(items[0]) if items else None
    plain = kind is not None and issubclass(kind, BaseModel) and all(type(v) is kind for v in items) and _closed(kind)
    try:
        if plain and kind is not None and issubclass(kind, Record):  # each record's JSON, kept (`recordjson`)
            for item in items:
                json_of(item)
        else:
            pydantic_core.to_json(value, serialize_as_any=not plain)
    except (pydantic_core.PydanticSerializationError, TypeError, ValueError, RecursionError):
        return False
    return True


def _closed(model: type[BaseModel]) -> bool:
    """Whether every model class a field of `model` declares, at any depth, has no subclass (nor has
    `model`), and no field is declared as an arbitrary object: then an instance's fields hold only
    instances of the classes declared, which the declared fields' serializers write whole."""
    seen: set[type] = set()
    todo: list[Any] = [model]
    while todo:
        kind = todo.pop()
        if kind in (Any, object) or kind is BaseModel:
            return False
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            if kind in seen:
                continue
            if kind.__subclasses__():
                return False
            seen.add(kind)
            todo.extend(info.annotation for info in kind.model_fields.values())
        else:
            todo.extend(get_args(kind))
    return True


def _no_surrogates(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape_control(text: str) -> str:
    if text.isprintable():  # every character `_CONTROL` names is unprintable: most text, at C speed
        return text
    return (
        _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
        if _CONTROL.search(text)
        else text
    )


def escape_controls(value: T) -> T:
    """`value` with control characters in its strings written as escapes (`\\n`, `\\x1b`, `\\u202e`).

    For terminal output: a group name holding a newline could forge an output line (in GitHub
    Actions logs, a workflow command), an ESC sequence could rewrite the terminal, a bidi override
    could reverse what a reviewer reads.
    """
    return cast(T, _walk(value, _escape_control))


_PLAIN = frozenset({int, float, bool, type(None), bytes})  # types `_walk` leaves as they are, at a glance
_FIELDS: dict[type[BaseModel], tuple[str, ...]] = {}  # a model class's field names, in order


def _walk(value: Any, fix: Callable[[str], str]) -> Any:
    """Apply `fix` to every string inside value (models, tuples, lists, sets, dicts), sharing what did not change."""
    kind = type(value)
    if kind is str:
        return fix(value)
    if kind in _PLAIN:  # most leaves of a report's findings besides strings: line numbers, None
        return value
    if isinstance(value, str):
        return fix(value)
    if isinstance(value, BaseModel):
        names = _FIELDS.get(kind)
        if names is None:
            names = _FIELDS[kind] = tuple(kind.model_fields)
        changes = {}
        for name in names:
            old = getattr(value, name)
            new = old if type(old) in _PLAIN else _walk(old, fix)
            if new is not old:
                changes[name] = new
        return value.model_copy(update=changes) if changes else value
    if isinstance(value, (tuple, list, frozenset, set)):
        items = [_walk(v, fix) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return type(value)(items)
    if isinstance(value, dict):
        pairs = [(_walk(k, fix), _walk(v, fix)) for k, v in value.items()]
        if all(a is k and b is v for (a, b), (k, v) in zip(pairs, value.items())):
            return value
        return type(value)(pairs)
    return value


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for the body (as it was afterwards: a nested pause leaves
    it to the outer one). A scan or the judging allocates hundreds of thousands of records and few
    cycles, while every collection those allocations trigger walks all live objects again: the
    content cache's state, the head's records during the base scan (a quarter of the time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
