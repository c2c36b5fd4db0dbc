"""The CLI's block reader (`log_records_blocks`) gives exactly the records and counts of the
line reader (`log_records`, also used by the Spark audit) on any log, cut into blocks anywhere."""

from __future__ import annotations

import io
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from subguard.evidence.reader import LogCounts, line_blocks, log_records, log_records_blocks

LINES = [
    "2024-03-01 10:00:00 INFO BrokerControllerScheduledThread1 - dispatch behind commit log 0 bytes",
    "2024-03-01 10:00:01 INFO ClientManageThread_1 - receive heartbeat from client 10.0.1.7@4711 of group g",
    (
        "2024-03-01 10:00:04 INFO ClientManageThread_0 - subscription changed, group: g OLD: SubscriptionData "
        "[classFilterMode=false, topic=T, subString=a, tagsSet=[a], codeSet=[97], subVersion=1, expressionType=TAG] "
        "NEW: SubscriptionData [classFilterMode=false, topic=T, subString=b, tagsSet=[b], codeSet=[98], subVersion=2, "
        "expressionType=TAG]"
    ),
    "2024-03-01 10:00:05 WARN PullMessageThread_7 - The broker's subscription is not latest, group: g a",
    "2019-12-11 09:57:47 WARN NettyClientPublicExecutor_1 - execute the pull request exception",
    "org.apache.rocketmq.client.exception.MQBrokerException: CODE: 25  DESC: the consumer's subscription not latest",
    "        at org.apache.rocketmq.client.impl.MQClientAPIImpl.processPullResponse(MQClientAPIImpl.java:645)",
    "16:51:43.778 [NettyClientPublicExecutor_2] WARN  RocketmqClient - consumer:g execute the pull request, code:25",
    "16:51:44.001 [main] INFO  App - started",
    (
        "2019-01-18 19:24:01 INFO PullMessageThread_49 - the request offset too small. group=g, topic=t, "
        "requestOffset=1, brokerMinOffset=9, clientIp=/10.0.0.1:1"
    ),
    " subVersion=1547810658600, expressionType",
    "=null]",
    "garbled text without a header",
    "2024-03-01 10:00:00 INFO looks like a header but \x00 has a NUL - subscription changed",
    "",
    "12345678901234567890",  # 20 characters: not a header
    "2024-03-01 10:00:00 INFO X",  # header-shaped, no ' - ': split_header says no
    "\u00b22024-03-01 10:00:00 INFO X - unicode digit first",
    "2024-03-01 10:00:00\r",
    "2024-13-45 99:99:99 ERROR Y - the consumer [g] start OK.",
    # one line for each family the reader looks for, so that a missing anchor shows
    "2019-12-11 09:57:46 INFO RebalanceService - t Rebalance changed, also update version: 1, 2",
    (
        "2019-12-11 09:57:46 INFO RebalanceService - rebalanced result changed. allocateMessageQueueStrategyName=AVG, "
        "group=g, topic=t, clientId=c, "
    ),
    "2024-03-01 10:00:16 WARN PullMessageThread_2 - the consumer's subscription not exist, group: g, topic:T",
    "2024-03-01 10:00:16 WARN PullMessageThread_2 - the consumer's group info not exist, group: g",
    (
        "2019-01-18 19:24:01 WARN PullMessageThread_49 - PULL_OFFSET_MOVED:correction offset. topic=t, groupId=g, "
        "requestOffset=1, newOffset=9, suggestBrokerId=0"
    ),
    (
        "2024-03-01 10:00:00 INFO ClientManageThread_1 - new consumer connected, group: g CONSUME_PASSIVELY CLUSTERING "
        "channel: ClientChannelInfo [channel=[id: 0x1], clientId=10.0.1.7@4711, language=JAVA]"
    ),
    (
        "2024-03-01 10:03:20 WARN ClientManageService_1 - SCAN: remove expired channel from ConsumerManager "
        "consumerTable. channel=10.0.1.8:40122, consumerGroup=g"
    ),
    "2024-03-01 10:03:20 INFO ClientManageThread_1 - unregister consumer ok, no any connection, and remove consumer group, g",
    "2024-03-01 10:03:20 INFO NettyEventExecutor - ungister consumer ok, no any connection, and remove consumer group, g",
    (
        "2024-05-02 08:00:03 INFO PullMessageThread_3 - the broker store no queue data, fix the request offset 8812 to 0, "
        "Topic: t QueueId: 2 Consumer Group: g"
    ),
    "2024-03-01 10:03:20 INFO X - Ignore consumer(g : T) filter(expression), old=TAG:a, ignored=TAG:b",
    (
        "2024-03-01 10:03:20 WARN X - the subscription is not latest, group=g, messageQueue=MessageQueue [topic=T, "
        "brokerName=b, queueId=1]"
    ),
    "2019-12-11 09:57:45 INFO main - the consumer [g] start beginning. messageModel=CLUSTERING, isUnitMode=false",
]


def _blocks(text: str, cuts: list[int]) -> list[str]:
    """`text` cut at line boundaries near the given offsets (what line_blocks yields)."""
    out, pos = [], 0
    for c in sorted(set(cuts)):
        nl = text.find("\n", max(pos, c))
        if nl == -1:
            break
        out.append(text[pos : nl + 1])
        pos = nl + 1
    if pos < len(text):
        out.append(text[pos:])
    return [b for b in out if b]


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.sampled_from(LINES), max_size=60),
    eol=st.sampled_from(["\n", "\r\n"]),
    final_newline=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=8),
)
def test_block_reader_equals_line_reader(lines: list[str], eol: str, final_newline: bool, cuts: list[int]) -> None:
    raw = eol.join(lines) + (eol if final_newline and lines else "")
    text = io.StringIO(raw, newline=None).read()  # as the file is opened: universal newlines
    by_line = LogCounts()
    numbered = enumerate(io.StringIO(text, newline=None), 1)
    expected = list(log_records(numbered, by_line))
    by_block = LogCounts()
    got = list(log_records_blocks(_blocks(text, cuts), 1, by_block))
    assert got == expected
    assert by_block == by_line


@given(text=st.text(alphabet="ab\n", max_size=300), size=st.integers(min_value=1, max_value=40))
def test_line_blocks_keep_every_character_at_line_boundaries(text: str, size: int) -> None:
    blocks = list(line_blocks(io.StringIO(text), size, max_line=10_000))
    assert "".join(blocks) == text
    assert all(b.endswith("\n") for b in blocks[:-1])


def test_an_over_long_line_is_cut_and_the_next_lines_kept() -> None:
    text = "x" * 100 + "\nshort\n" + "y" * 50
    blocks = list(line_blocks(io.StringIO(text), 7, max_line=20))
    assert "".join(blocks) == "x" * 20 + "\nshort\n" + "y" * 20


def test_every_wording_the_reader_looks_for_holds_an_anchor() -> None:
    """The block reader only looks at lines holding an anchor: each INTERESTING alternative (and
    the pull-exception prefix) must contain one, or its lines would be counted as boring."""
    import re

    from subguard.evidence.messages import INTERESTING
    from subguard.evidence.reader import _PULL_EXCEPTION, ANCHORS

    words = [re.sub(r"\\(.)", r"\1", w) for w in INTERESTING.pattern.split("|")] + [_PULL_EXCEPTION]
    assert len(words) > 10
    assert [w for w in words if not any(a in w for a in ANCHORS)] == []


def test_lines_of_blocks_cut_an_over_long_line_and_keep_the_rest() -> None:
    from subguard.evidence.reader import lines_of

    text = "x" * 100 + "\nshort\n" + "y" * 50
    assert list(lines_of(line_blocks(io.StringIO(text), 7, max_line=20))) == ["x" * 20 + "\n", "short\n", "y" * 20]
    assert "".join(lines_of(line_blocks(io.StringIO(text), 7, max_line=20))) == "".join(
        line_blocks(io.StringIO(text), 7, max_line=20)
    )


def test_a_file_that_is_one_huge_line_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """No newline at all in 64 MB: the head detection and the log reader hold at most one cut line."""
    import subprocess
    import sys

    big = tmp_path / "broker.log"
    with open(big, "w", encoding="utf-8") as fh:
        fh.writelines("z" * (1 << 20) for _ in range(64))
    code = (
        "import resource, sys; from subguard.evidence.analyze import analyze; r = analyze([sys.argv[1]]); "
        "print(r.files[0].lines, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(big)], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out[0] == "1"
    assert int(out[1]) < 120 * 1024, f"peak RSS {int(out[1]) // 1024} MiB"  # the file alone is 64 MiB, as str 64+ MiB
