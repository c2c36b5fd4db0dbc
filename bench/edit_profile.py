"""Where an edited, served `subguard check` spends its time: a sampling profile of the run a resident
server forks, after one edit of a consumer file.

    python bench/edit_profile.py TREE [--rounds 8] [--top 40] [--format json]

The modules are loaded as `subguard serve` loads them (`server.preload`), and after each round the
cache files the run loaded are kept, and the trees it walked watched, as the server does (`warm`);
each round edits the edit target of `check_speed.py` (a blank line added, then taken away again;
with `--subscription`, a tag never written before added to its first subscription),
waits past the run memo's racy window as an editor's save would, brings the watched walks up to date
and forks the run as the server does (`entry.check_here(served=True)`: its replay misses, then it
runs). The forked run is sampled every 0.5 ms of its CPU time (SIGPROF) until it has answered (its
exit code sent: what its client waits for; the caches and memos it writes for the next run come
after); printed: each round's wall seconds (the forked run, its replay included), the seconds until
its answer, then the share of samples in which each function (subguard's by module path) was on the
stack (inclusive) and on top (self), over all rounds but the first (it fills the caches). The tree's caches live in a temporary folder; the edited file is
restored afterwards."""

from __future__ import annotations

import argparse
import collections
import gc
import marshal
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_speed  # noqa: E402 - the sibling benchmark's edit target

INTERVAL = 0.0005  # seconds of CPU time between samples


def _key(frame: FrameType) -> str:
    code = frame.f_code
    return f"{code.co_filename.rpartition('/subguard/')[2] or code.co_filename}:{code.co_firstlineno}:{code.co_name}"


def _sampled_run(argv: list[str], out: int, tell: int) -> None:
    """In the forked child: run the check as a served run does (its replay misses) under SIGPROF
    sampling, write the counts to `out` and, as a served run does, the cache files it loaded and the
    trees it walked to `tell` (`subguard.cli.resident.warm`)."""
    from subguard.cli.entry import check_here
    from subguard.cli.resident import warm

    gc.disable()  # as the server's forked run (`server.Server`): it ends with os._exit
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    taken = [0]

    def sample(signum: int, frame: FrameType | None) -> None:
        taken[0] += 1
        seen: set[str] = set()
        top = True
        while frame is not None:
            key = _key(frame)
            if top:
                own[key] += 1
                top = False
            if key not in seen:
                inclusive[key] += 1
                seen.add(key)
            frame = frame.f_back

    answered = [0.0]

    def answer(code: int) -> None:  # the client has its answer: what follows is for the next run
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        answered[0] = time.perf_counter()

    signal.signal(signal.SIGPROF, sample)
    signal.setitimer(signal.ITIMER_PROF, INTERVAL, INTERVAL)
    code = 2
    try:
        code = check_here(argv, served=True, answer=answer)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        data = marshal.dumps((taken[0], dict(inclusive), dict(own), answered[0]))
        os.write(out, len(data).to_bytes(4, "big"))
        view = memoryview(data)
        while view:
            view = view[os.write(out, view) :]
        warm.tell(tell)
        os._exit(code)


def _read(fd: int) -> tuple[int, dict[str, int], dict[str, int], float]:
    size = int.from_bytes(os.read(fd, 4), "big")
    chunks = []
    while size:
        chunk = os.read(fd, size)
        chunks.append(chunk)
        size -= len(chunk)
    taken, inclusive, own, answered = marshal.loads(b"".join(chunks))
    return taken, inclusive, own, answered


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", type=Path)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--format", default="json", help="the check's --format (the speed benchmark's: json)")
    ap.add_argument(
        "--subscription",
        action="store_true",
        help="edit the target's first subscription instead (a new tag each round: its group judged anew)",
    )
    args = ap.parse_args()
    tree = args.tree.resolve()
    work = Path(tempfile.mkdtemp(prefix="sg-edit-profile-"))
    os.environ["XDG_CACHE_HOME"] = str(work / "xdg")
    os.environ["XDG_RUNTIME_DIR"] = str(work / "run")
    cfg = work / ".subguard.yaml"
    cfg.write_text(f"cache-dir: {work / 'cache'}\n", encoding="utf-8")
    argv = ["check", str(tree), "--config", str(cfg), "--format", args.format, "--output", os.devnull]
    argv += ["--fail-on", "none"]

    from subguard.cli.resident import server
    from subguard.core import identity
    from subguard.scan import runmemo, watch

    identity.hold_install_stamp()  # as `subguard serve` does before it names its socket
    server.preload()
    from subguard.cli.resident import warm

    target = check_speed.edit_target(tree)
    original, st = target.read_bytes(), target.stat()
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    samples, walls, answers = 0, [], []
    read_fd, write_fd = os.pipe()
    try:
        for n in range(args.rounds + 1):
            changed = check_speed.subscription_edit(original, n) if args.subscription else None
            target.write_bytes(changed if changed is not None else original + b"\n" if n % 2 == 0 else original)
            time.sleep(runmemo.RACY_NS / 1e9 + 0.05)
            start = time.perf_counter()
            saved = os.dup(1), os.dup(2)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.close(null)
            try:
                watch.refresh()  # as the server does before it forks
                told, tell = os.pipe()
                pid = os.fork()
                if pid == 0:
                    os.close(told)
                    _sampled_run(argv, write_fd, tell)
                os.close(tell)
                taken, inc, top, answered = _read(read_fd)
                os.waitpid(pid, 0)
            finally:
                for fd, kept in ((1, saved[0]), (2, saved[1])):
                    os.dup2(kept, fd)
                    os.close(kept)
            walls.append(time.perf_counter() - start)
            answers.append(answered - start)
            told_by_run = warm.Told(told)  # as the server, once the run has ended: what it loaded, kept
            told_by_run.read()
            told_by_run.close()
            if n:  # the first round fills the caches
                samples += taken
                inclusive.update(inc)
                own.update(top)
    finally:
        target.write_bytes(original)
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    print(f"tree: {tree}, rounds: {args.rounds} (+1 filling the caches), samples: {samples}")
    print("wall s per round (the forked run, its replay included):", " ".join(f"{w:.3f}" for w in walls))
    print("s until the answer (the fork, until its client has the exit code):", " ".join(f"{a:.3f}" for a in answers))
    print(f"median until the answer, rounds after the first: {statistics.median(answers[1:]):.3f} s")
    for title, counts in (("inclusive", inclusive), ("self", own)):
        print(f"== {title}")
        for key, count in counts.most_common(args.top):
            print(f"{100 * count / max(samples, 1):5.1f}%  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
