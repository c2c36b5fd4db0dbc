"""Frames over a Unix socket between two processes of one user: a 4-byte big-endian length and a JSON
object (or bytes), passed descriptors travelling with its header; and who the peer is. The resident
server's clients send their standard streams this way (`subguard.cli.resident`), as Spark's worker
daemon sends its own to the audit's zygote (`subguard.audit.zygote`).
Standard library only (a `check`'s client loads it before anything else)."""

from __future__ import annotations

import json
import os
import socket
import struct

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

_HEADER = struct.Struct(">I")
_PEERCRED = struct.Struct("3i")  # pid, uid, gid of the peer (SO_PEERCRED, Linux)
MOST_BYTES = 16 * 1024 * 1024  # a frame longer than this is refused (a request is its argv and environment)


def send(sock: socket.socket, value: dict[str, Any], fds: Sequence[int] = ()) -> None:
    """One JSON frame; `fds` travel with its header."""
    send_blob(sock, json.dumps(value).encode("ascii"), fds)


def send_blob(sock: socket.socket, body: bytes, fds: Sequence[int] = ()) -> None:
    """One frame of bytes; `fds` travel with its header."""
    header = _HEADER.pack(len(body))
    if fds:
        sent = socket.send_fds(sock, [header], list(fds))
        if sent != len(header):
            raise OSError("short write of a frame header")
    else:
        sock.sendall(header)
    if body:  # `sendall(b"")` still sends once: to a peer that has answered and closed, a broken pipe
        sock.sendall(body)


def receive(sock: socket.socket, most_fds: int = 0) -> tuple[dict[str, Any] | None, list[int]]:
    """The next JSON frame and the descriptors that came with it; (None, []) when the peer closed
    first. ValueError for a frame that is not one."""
    body, fds = receive_blob(sock, most_fds)
    if body is None:
        return None, []
    try:
        value = json.loads(body)
    except ValueError:
        _close(fds)
        raise
    if not isinstance(value, dict):
        _close(fds)
        raise ValueError("a frame that is not a JSON object")
    return value, fds


def receive_blob(sock: socket.socket, most_fds: int = 0) -> tuple[bytes | None, list[int]]:
    """The next frame's bytes and the descriptors that came with it; (None, []) when the peer closed
    first. ValueError for a frame longer than `MOST_BYTES`."""
    fds: list[int] = []
    head = b""
    while len(head) < _HEADER.size:
        if most_fds and not fds:
            chunk, got, _flags, _addr = socket.recv_fds(sock, _HEADER.size - len(head), most_fds)
            fds.extend(got)
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


def _close(fds: Sequence[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def peer(sock: socket.socket) -> tuple[int, int] | None:
    """(pid, uid) of the process at the other end of a connected Unix socket (Linux's SO_PEERCRED);
    None where the system does not tell."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    pid, uid, _gid = _PEERCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, option, _PEERCRED.size))
    return pid, uid
