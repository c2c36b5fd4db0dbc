"""Log record headers: split `<timestamp> <level> ... - <message>` and read the timestamp.

Layouts seen in RocketMQ logs:
  broker 4.x/5.x     `%d{yyy-MM-dd HH:mm:ss} %p %t - %m`             2019-01-18 19:24:01 INFO PullMessageThread_49 - ...
  client 4.x (inner) `yyyy-MM-dd HH:mm:ss,SSS LEVEL logger - %m`     2019-12-11 09:57:47,101 WARN RocketmqClient - ...
  client 5.x         `yyy-MM-dd HH:mm:ss.SSS %-5p [pid] [thread] [logger#method:line] - %m`
  app logback        `HH:mm:ss.SSS [thread] LEVEL logger - %m`        16:51:43.778 [NettyClientPublicExecutor_2] WARN  RocketmqClient - ...
"""

from __future__ import annotations

import calendar
import re
from functools import lru_cache

_DATED = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[,.](\d{1,3}))?\s+(?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\b.*? - "
)
_TIMED = re.compile(
    r"(\d\d):(\d\d):(\d\d)(?:[,.](\d{1,3}))?\s+\[[^\]]*\]\s+(?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\b.*? - "
)


@lru_cache(maxsize=4096)
def _day(year: int, month: int, day: int) -> int:
    return calendar.timegm((year, month, day, 0, 0, 0, 0, 0, 0))


def _seconds(h: str, m: str, s: str, ms: str | None) -> float:
    return int(h) * 3600 + int(m) * 60 + int(s) + (int(ms.ljust(3, "0")) / 1000.0 if ms else 0.0)


def split_header(line: str) -> tuple[float | None, str] | None:
    """(timestamp seconds, message) when `line` starts a log record, else None.

    Dated records give epoch seconds of the naive log time; time-only records give seconds of day.
    An out-of-range date keeps the message and drops the timestamp.
    """
    if not line or not line[0].isdigit():
        return None
    m = _DATED.match(line)
    if m is not None:
        y, mo, d, h, mi, s, ms = m.groups()
        try:
            ts: float | None = _day(int(y), int(mo), int(d)) + _seconds(h, mi, s, ms)
        except (ValueError, OverflowError):
            ts = None
        return ts, line[m.end() :]
    t = _TIMED.match(line)
    if t is not None:
        h, mi, s, ms = t.groups()
        return _seconds(h, mi, s, ms), line[t.end() :]
    return None
