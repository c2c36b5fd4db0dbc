"""Streaming speed and memory of `subguard evidence` on a large synthetic broker log.

    python bench/evidence_speed.py            # 1 GB (default)
    python bench/evidence_speed.py --size 100 # 100 MB
    python bench/evidence_speed.py --gzip     # the same, gzip-compressed

The log is written to a temporary directory (deleted afterwards): mostly unrelated broker chatter,
with the seed-004 offset-moved lines, version-only subscription changes every 20 s, a tag-flapping
group, code 25 and joins mixed in. Prints lines/s, MB/s and the peak RSS (`resource.getrusage`).
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import tempfile
import time
from typing import IO

from subguard.evidence.analyze import analyze

SUB = ("SubscriptionData [classFilterMode=false, topic={topic}, subString={sub}, tagsSet=[{tags}], codeSet=[], "
       "subVersion={ver}, expressionType=TAG]")
CHATTER = (
    "{ts} INFO PullMessageThread_{n} - get message from commit log, topic=t{n}, queueId=3, offset=918{n}2, size=1024\n",
    "{ts} INFO BrokerControllerScheduledThread1 - dispatch behind commit log 0 bytes\n",
    "{ts} INFO ClientManageThread_{n} - receive heartbeat from client 10.0.{n}.7@4711#9981 of group g{n}\n",
    "{ts} WARN NettyServerCodecThread_{n} - closeChannel: close the connection to remote address[10.0.{n}.9:5512] result: true\n",
    "{ts} INFO StoreStatsService - [STORETPS] put_tps 1021.3 get_found_tps 998.1 get_miss_tps 2.0 get_transfered_tps 1020.7\n",
)


def block(second: int) -> str:
    """About 40 lines for one second of log time; relevant lines at their real cadence."""
    ts = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(1709280000 + second))
    out = [CHATTER[i % len(CHATTER)].format(ts=ts, n=i % 16) for i in range(36)]
    if second % 20 == 0:
        out.append(f"{ts} INFO PullMessageThread_49 - the request offset too small. group=digg-group, topic=digg-topic, "
                   "requestOffset=156798, brokerMinOffset=172289, clientIp=/10.12.4.31:54437\n")
        out.append(f"{ts} INFO ClientManageThread_27 - subscription changed, group: digg-group OLD: "
                   + SUB.format(topic="digg-topic", sub="*", tags="", ver=second) + " NEW: "
                   + SUB.format(topic="digg-topic", sub="*", tags="", ver=second + 1) + "\n")
    if second % 30 == 5:
        a, b = ("tag1", "tag2") if second % 60 == 5 else ("tag2", "tag1")
        out.append(f"{ts} INFO ClientManageThread_3 - subscription changed, group: tagflip-group OLD: "
                   + SUB.format(topic="TagTopic", sub=a, tags=a, ver=second) + " NEW: "
                   + SUB.format(topic="TagTopic", sub=b, tags=b, ver=second + 1) + "\n")
        out.append(f"{ts} WARN PullMessageThread_7 - The broker's subscription is not latest, group: tagflip-group {a}\n")
    if second % 600 == 7:
        out.append(f"{ts} INFO ClientManageThread_1 - new consumer connected, group: g{second % 97} CONSUME_PASSIVELY CLUSTERING "
                   "channel: ClientChannelInfo [channel=[id: 0x1a, L:/10.0.0.5:10911 - R:/10.0.1.7:54437], clientId=10.0.1.7@1, "
                   "language=JAVA, version=399, lastUpdateTimestamp=1]\n")
    return "".join(out)


def generate(fh: IO[str], size: int) -> int:
    written, second = 0, 0
    while written < size:
        text = block(second)
        fh.write(text)
        written += len(text)
        second += 1
    return written


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024, help="log size in MB (default 1024)")
    ap.add_argument("--gzip", action="store_true", help="write and read the log gzip-compressed")
    args = ap.parse_args()
    size = args.size * 1024 * 1024
    with tempfile.TemporaryDirectory(prefix="sg-evidence-bench-") as tmp:
        path = os.path.join(tmp, "broker.log.gz" if args.gzip else "broker.log")
        t0 = time.perf_counter()
        with (gzip.open(path, "wt", compresslevel=1) if args.gzip else open(path, "w", encoding="utf-8")) as fh:
            written = generate(fh, size)
        gen = time.perf_counter() - t0
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0, c0 = time.perf_counter(), time.process_time()
        result = analyze([path], workdir=tmp)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
        (stats,) = result.files
        print(f"file: {written / 1e6:.0f} MB of log text{' (gzip)' if args.gzip else ''}, {stats.lines} lines, "
              f"generated in {gen:.1f} s")
        print(f"processed in {elapsed:.1f} s wall, {cpu:.1f} s CPU: {stats.lines / elapsed:,.0f} lines/s wall "
              f"({stats.lines / cpu:,.0f} lines/s CPU), {written / 1e6 / elapsed:.1f} MB/s, "
              f"{result.events} events, {len(result.findings)} findings ({', '.join(sorted({f.rule for f in result.findings}))})")
        print(f"peak RSS: {rss / 1024:.1f} MiB (before processing: {rss_before / 1024:.1f} MiB); target < 200 MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
