"""What a served run tells its server after it ends: the cache files it loaded (`subguard.core.kept`),
which the server then loads again and keeps for the runs it forks later, and the trees it walked,
which the server then watches (`subguard.scan.watch`).

One message per run on a pipe of its own: a 4-byte length and a JSON list of (kind, path, key
folder). It is written whole in one write, smaller than a pipe holds, so the run never waits on
the server; the server reads it without blocking, whenever the pipe is readable or the run ends.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os

from subguard.core import kept, signing
from subguard.scan import runmemo, watch

# the run memo's entries, kept for the runs it forks; registered here, by the server: the run memo
# is what an unchanged run imports, and it does not import `kept` (runmemo registers the kinds of
# trees a run walks itself, `watch.PARAMS`)
kept.register(runmemo.KEPT_KIND, lambda path: (path,), runmemo.load_entry)

MOST_TOLD = 32 * 1024  # bytes of one message: less than a pipe holds
_LENGTH = 4


WATCH = "watch:"  # the kind of a tree to watch (`subguard.scan.watch`): "watch:" + its kind, folder, extra


def tell(fd: int) -> None:
    """In the run, once it is over: write the cache files it loaded, and the trees it walked, to
    `fd` and close it."""
    trees = [(WATCH + kind, path, extra) for kind, path, extra in watch.wanted()]
    body = json.dumps([*kept.drain(), *trees]).encode("utf-8", "surrogateescape")
    with contextlib.suppress(OSError):
        if len(body) <= MOST_TOLD:
            os.write(fd, len(body).to_bytes(_LENGTH, "big") + body)
    os.close(fd)


class Told:
    """The server's end of one run's pipe."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.open = True
        self._got = bytearray()
        self.memos: list[str] = []  # the run memo entries the run named (`subguard.cli.resident.runahead`)

    def read(self) -> None:
        """Take what the pipe holds now; at the end of the message, or of the pipe, keep what it
        names (`keep`) and close it."""
        if not self.open:
            return
        ended = False
        try:
            os.set_blocking(self.fd, False)
            while chunk := os.read(self.fd, 65536):
                self._got += chunk
                if len(self._got) > MOST_TOLD + _LENGTH:  # not a message a run writes: closed below
                    break
            else:
                ended = True  # end of file: every process that held the pipe has closed it
        except BlockingIOError:
            pass
        except OSError:
            ended = True
        size = int.from_bytes(self._got[:_LENGTH], "big") if len(self._got) >= _LENGTH else -1
        if 0 <= size and len(self._got) >= _LENGTH + size:
            named = parse(bytes(self._got[_LENGTH : _LENGTH + size]))
            self.memos = [path for kind, path, _ in named if kind == runmemo.KEPT_KIND]
            keep(named)
            ended = True
        if ended or len(self._got) > MOST_TOLD + _LENGTH:
            self.close()

    def close(self) -> None:
        if self.open:
            self.open = False
            os.close(self.fd)


def parse(body: bytes) -> list[tuple[str, str, str]]:
    """The (kind, path, key folder) triples of a message; [] for anything else."""
    try:
        rows = json.loads(body.decode("utf-8", "surrogateescape"))
    except ValueError:
        return []
    ok = isinstance(rows, list) and all(
        isinstance(r, list) and len(r) == 3 and all(isinstance(x, str) for x in r) for r in rows
    )
    return [(r[0], r[1], r[2]) for r in rows] if ok else []


def keep(wanted: list[tuple[str, str, str]]) -> None:
    """Load and keep the named files (`kept.warm`) and watch the named trees (`watch.start`), then
    freeze them: the forked runs never copy what the server keeps by collecting it."""
    files = [w for w in wanted if not w[0].startswith(WATCH)]
    trees = [(kind.removeprefix(WATCH), path, extra) for kind, path, extra in wanted if kind.startswith(WATCH)]
    started = sum(watch.start(tree) for tree in trees)
    if (files and kept.warm(files, signing.stored_key)) or started:
        gc.freeze()
