"""Streaming speed and memory of `subguard evidence` on a large synthetic broker log.

    python bench/evidence_speed.py            # 1 GB (default)
    python bench/evidence_speed.py --size 100 # 100 MB
    python bench/evidence_speed.py --gzip     # the same, gzip-compressed

The log is written to a temporary directory (deleted afterwards): mostly unrelated broker chatter,
with the seed-004 offset-moved lines, version-only subscription changes every 20 s, a tag-flapping
group, code 25 and joins mixed in. Runs `subguard evidence` on it in its own process and `grep -c` over the same file (the
reference), and prints lines/s, the time ratio and the evidence process's peak RSS.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import IO

SUB = (
    "SubscriptionData [classFilterMode=false, topic={topic}, subString={sub}, tagsSet=[{tags}], codeSet=[], "
    "subVersion={ver}, expressionType=TAG]"
)
CHATTER = (
    "{ts} INFO PullMessageThread_{n} - get message from commit log, topic=t{n}, queueId=3, offset=918{n}2, size=1024\n",
    "{ts} INFO BrokerControllerScheduledThread1 - dispatch behind commit log 0 bytes\n",
    "{ts} INFO ClientManageThread_{n} - receive heartbeat from client 10.0.{n}.7@4711#9981 of group g{n}\n",
    "{ts} WARN NettyServerCodecThread_{n} - closeChannel: close the connection to remote address[10.0.{n}.9:5512] result: true\n",
    "{ts} INFO StoreStatsService - [STORETPS] put_tps 1021.3 get_found_tps 998.1 get_miss_tps 2.0 get_transfered_tps 1020.7\n",
)

# grep reference: the lines of the families subguard classifies
REFERENCE_PATTERN = "subscription changed|subscription is not latest|offset too small|PULL_OFFSET_MOVED|CODE: 25"


def block(second: int) -> str:
    """About 40 lines for one second of log time; relevant lines at their real cadence."""
    ts = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(1709280000 + second))
    out = [CHATTER[i % len(CHATTER)].format(ts=ts, n=i % 16) for i in range(36)]
    if second % 20 == 0:
        out.append(
            f"{ts} INFO PullMessageThread_49 - the request offset too small. group=digg-group, topic=digg-topic, "
            "requestOffset=156798, brokerMinOffset=172289, clientIp=/10.12.4.31:54437\n"
        )
        out.append(
            f"{ts} INFO ClientManageThread_27 - subscription changed, group: digg-group OLD: "
            + SUB.format(topic="digg-topic", sub="*", tags="", ver=second)
            + " NEW: "
            + SUB.format(topic="digg-topic", sub="*", tags="", ver=second + 1)
            + "\n"
        )
    if second % 30 == 5:
        a, b = ("tag1", "tag2") if second % 60 == 5 else ("tag2", "tag1")
        out.append(
            f"{ts} INFO ClientManageThread_3 - subscription changed, group: tagflip-group OLD: "
            + SUB.format(topic="TagTopic", sub=a, tags=a, ver=second)
            + " NEW: "
            + SUB.format(topic="TagTopic", sub=b, tags=b, ver=second + 1)
            + "\n"
        )
        out.append(
            f"{ts} WARN PullMessageThread_7 - The broker's subscription is not latest, group: tagflip-group {a}\n"
        )
    if second % 600 == 7:
        out.append(
            f"{ts} INFO ClientManageThread_1 - new consumer connected, group: g{second % 97} CONSUME_PASSIVELY CLUSTERING "
            "channel: ClientChannelInfo [channel=[id: 0x1a, L:/10.0.0.5:10911 - R:/10.0.1.7:54437], clientId=10.0.1.7@1, "
            "language=JAVA, version=399, lastUpdateTimestamp=1]\n"
        )
    return "".join(out)


def generate(fh: IO[str], size: int) -> int:
    written, second = 0, 0
    while written < size:
        text = block(second)
        fh.write(text)
        written += len(text)
        second += 1
    return written


def count_lines(path: str, compressed: bool) -> int:
    """Newlines in the (decompressed) log, read in large blocks."""
    with gzip.open(path, "rb") if compressed else open(path, "rb") as fh:
        return sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 24), b""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024, help="log size in MB (default 1024)")
    ap.add_argument("--gzip", action="store_true", help="write and read the log gzip-compressed")
    args = ap.parse_args()
    size = args.size * 1024 * 1024
    with tempfile.TemporaryDirectory(prefix="sg-evidence-bench-") as tmp:
        path = os.path.join(tmp, "broker.log.gz" if args.gzip else "broker.log")
        t0 = time.perf_counter()
        with gzip.open(path, "wt", compresslevel=1) if args.gzip else open(path, "w", encoding="utf-8") as fh:
            written = generate(fh, size)
        gen = time.perf_counter() - t0
        # the CLI as users run it, in its own process (peak RSS of that process alone)
        report = os.path.join(tmp, "findings.json")
        cmd = [sys.executable, "-m", "subguard", "evidence", path, "--format", "json", "--output", report]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - t0
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode not in (0, 1):
            print(proc.stderr)
            return 2
        # reference in the same run: grep counting the lines that mention the same families
        ref_cmd = ["zgrep" if args.gzip else "grep", "-c", "-E", REFERENCE_PATTERN, path]
        t0 = time.perf_counter()
        ref = subprocess.run(ref_cmd, capture_output=True, text=True, check=False)
        ref_elapsed = time.perf_counter() - t0
        lines = count_lines(path, args.gzip)
        with open(report, encoding="utf-8") as fh:
            rules = sorted({f["rule"] for f in json.load(fh)})
        print(
            f"file: {written / 1e6:.0f} MB of log text{' (gzip)' if args.gzip else ''}, {lines} lines, "
            f"generated in {gen:.1f} s"
        )
        print(
            f"subguard evidence: {elapsed:.1f} s wall, {lines / elapsed:,.0f} lines/s, "
            f"{written / 1e6 / elapsed:.1f} MB/s, findings: {', '.join(rules)}"
        )
        print(
            f"{' '.join(ref_cmd[:3])} (reference): {ref_elapsed:.1f} s wall, {lines / ref_elapsed:,.0f} lines/s, "
            f"{ref.stdout.strip()} matching lines"
        )
        print(f"ratio evidence/grep: {elapsed / ref_elapsed:.2f}x time")
        print(f"peak RSS of the evidence process: {usage.ru_maxrss / 1024:.1f} MiB; target < 200 MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
