"""Frames over a Unix socket between two processes of one user: a 4-byte big-endian length and a
marshalled dict (or bytes), passed descriptors travelling with its header; and who the peer is. The
resident server's clients send their standard streams this way (`subguard.cli.resident`), as Spark's
worker daemon sends its own to the audit's zygote (`subguard.audit.zygote`).

Built-in modules only (`_socket`, `marshal`): a `check`'s client loads this before anything else,
and `socket`, `json` and the `re` and `enum` they import are most of what it would load. A frame is
read only from a peer of the same user in a folder only that user may enter (marshal data is code's
own format, not for strangers); the callers check the peer (`peer`).
"""

from __future__ import annotations

import _socket
import marshal
import os
import struct

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    Socket = _socket.socket

_HEADER = struct.Struct(">I")
_PEERCRED = struct.Struct("3i")  # pid, uid, gid of the peer (SO_PEERCRED, Linux)
MOST_BYTES = 16 * 1024 * 1024  # a frame longer than this is refused (a request is its argv and environment)


def send(sock: Socket, value: dict[str, Any], fds: Sequence[int] = ()) -> None:
    """One frame of `value` (strings, numbers, lists and dicts of them); `fds` travel with its header."""
    send_blob(sock, marshal.dumps(value), fds)


def send_blob(sock: Socket, body: bytes, fds: Sequence[int] = ()) -> None:
    """One frame of bytes; `fds` travel with its header."""
    header = _HEADER.pack(len(body))
    if fds:
        rights = struct.pack(f"{len(fds)}i", *fds)
        sent = sock.sendmsg([header], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
        if sent != len(header):
            raise OSError("short write of a frame header")
    else:
        sock.sendall(header)
    if body:  # `sendall(b"")` still sends once: to a peer that has answered and closed, a broken pipe
        sock.sendall(body)


def receive(sock: Socket, most_fds: int = 0) -> tuple[dict[str, Any] | None, list[int]]:
    """The next frame's dict and the descriptors that came with it; (None, []) when the peer closed
    first. ValueError for a frame that is not one."""
    body, fds = receive_blob(sock, most_fds)
    if body is None:
        return None, []
    try:
        value = marshal.loads(body)
    except (EOFError, ValueError, TypeError) as exc:
        _close(fds)
        raise ValueError(f"a frame that is not one: {exc}") from exc
    if not isinstance(value, dict):
        _close(fds)
        raise ValueError("a frame that is not a dict")
    return value, fds


def receive_blob(sock: Socket, most_fds: int = 0) -> tuple[bytes | None, list[int]]:
    """The next frame's bytes and the descriptors that came with it; (None, []) when the peer closed
    first. ValueError for a frame longer than `MOST_BYTES`."""
    fds: list[int] = []
    head = b""
    while len(head) < _HEADER.size:
        if most_fds and not fds:
            chunk, ancillary, _flags, _addr = sock.recvmsg(_HEADER.size - len(head), _socket.CMSG_LEN(most_fds * 4))
            fds.extend(_rights(ancillary))
        else:
            chunk = sock.recv(_HEADER.size - len(head))
        if not chunk:
            _close(fds)
            return None, []
        head += chunk
    (length,) = _HEADER.unpack(head)
    if length > MOST_BYTES:
        _close(fds)
        raise ValueError(f"a frame of {length} bytes")
    body = bytearray()
    while len(body) < length:
        chunk = sock.recv(min(length - len(body), 1 << 20))
        if not chunk:
            _close(fds)
            return None, []
        body += chunk
    return bytes(body), fds


def _rights(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    """The descriptors passed in a message's ancillary data (SCM_RIGHTS)."""
    out: list[int] = []
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            whole = len(data) - len(data) % 4
            out.extend(struct.unpack(f"{whole // 4}i", data[:whole]))
    return out


def _close(fds: Sequence[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def peer(sock: Socket) -> tuple[int, int] | None:
    """(pid, uid) of the process at the other end of a connected Unix socket (Linux's SO_PEERCRED);
    None where the system does not tell."""
    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return None
    pid, uid, _gid = _PEERCRED.unpack(sock.getsockopt(_socket.SOL_SOCKET, option, _PEERCRED.size))
    return pid, uid
