"""Linux inotify through ctypes (standard library only): an instance, watches on folders, its events.

Loaded only by a resident server that watches trees (`subguard.scan.watch`); never by a console run.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys
from dataclasses import dataclass

MODIFY, ATTRIB, CLOSE_WRITE = 0x2, 0x4, 0x8
MOVED_FROM, MOVED_TO, CREATE, DELETE = 0x40, 0x80, 0x100, 0x200
DELETE_SELF, MOVE_SELF, UNMOUNT, Q_OVERFLOW, IGNORED = 0x400, 0x800, 0x2000, 0x4000, 0x8000
ONLYDIR, ISDIR = 0x01000000, 0x40000000
_NONBLOCK, _CLOEXEC = os.O_NONBLOCK, getattr(os, "O_CLOEXEC", 0o2000000)
# every change to a folder's entries, or to the folder itself, that a listing could see
FOLDER_EVENTS = MODIFY | ATTRIB | CLOSE_WRITE | MOVED_FROM | MOVED_TO | CREATE | DELETE | DELETE_SELF | MOVE_SELF
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len


@dataclass(frozen=True)
class Event:
    wd: int
    mask: int
    name: str


class InotifyError(OSError):
    """inotify is not available, or refused a watch."""


def _libc() -> ctypes.CDLL:
    if not sys.platform.startswith("linux"):
        raise InotifyError(errno.ENOSYS, "inotify is Linux only")
    libc = ctypes.CDLL(None, use_errno=True)
    for name in ("inotify_init1", "inotify_add_watch", "inotify_rm_watch"):
        if not hasattr(libc, name):
            raise InotifyError(errno.ENOSYS, f"no {name} in the C library")
    return libc


class Instance:
    """One inotify instance (a descriptor): watches added by path, events read without blocking."""

    def __init__(self) -> None:
        self._libc = _libc()
        fd = self._libc.inotify_init1(_NONBLOCK | _CLOEXEC)
        if fd < 0:
            code = ctypes.get_errno()
            raise InotifyError(code, f"inotify_init1: {os.strerror(code)}")
        self.fd: int = fd

    def add(self, path: str, mask: int = FOLDER_EVENTS | ONLYDIR) -> int:
        """The watch descriptor of the folder at `path` (links followed: `/proc/self/fd/N` names an
        open folder); InotifyError when refused (no such folder, watch limit reached)."""
        wd: int = self._libc.inotify_add_watch(self.fd, os.fsencode(path), mask)
        if wd < 0:
            code = ctypes.get_errno()
            raise InotifyError(code, f"inotify_add_watch {path}: {os.strerror(code)}")
        return wd

    def pending(self) -> bool:
        """Whether an event waits to be read (nothing is consumed)."""
        import select

        return bool(select.select([self.fd], [], [], 0)[0])

    def read(self) -> list[Event]:
        """Every event queued now."""
        out: list[Event] = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            if not data:
                return out
            at = 0
            while at + _HEADER.size <= len(data):
                wd, mask, _cookie, size = _HEADER.unpack_from(data, at)
                raw = data[at + _HEADER.size : at + _HEADER.size + size].rstrip(b"\0")
                out.append(Event(wd, mask, os.fsdecode(raw)))
                at += _HEADER.size + size

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
