"""`SubscriptionData.toString()` as the broker logs it (same text in 4.x and 5.x):

    SubscriptionData [classFilterMode=false, topic=T, subString=tag1 || tag2, tagsSet=[tag1, tag2],
    codeSet=[3552214, 3552215], subVersion=1547810638588, expressionType=TAG]

Old 4.x releases omit `, expressionType=...`; `expressionType=null` means TAG.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_SUBDATA = re.compile(
    r"SubscriptionData \[classFilterMode=\w+, topic=(?P<topic>.*?), subString=(?P<sub>.*?), "
    r"tagsSet=\[(?P<tags>.*?)\], codeSet=\[[-0-9, ]*\], subVersion=(?P<ver>-?\d+)(?:, expressionType=(?P<type>\w+))?\]"
)


@dataclass(frozen=True)
class LoggedSubscription:
    topic: str
    expression: str
    expression_type: str  # TAG or SQL92 (null -> TAG)
    tags: str  # sorted, joined with "||"
    sub_version: int


def _type(raw: str | None) -> str:
    return "TAG" if raw in (None, "null", "TAG") else str(raw)


def parse_all(text: str) -> Iterator[LoggedSubscription]:
    """Every SubscriptionData printed in `text`, in order."""
    for m in _SUBDATA.finditer(text):
        tags = sorted(t for t in m.group("tags").split(", ") if t)
        yield LoggedSubscription(
            m.group("topic"), m.group("sub"), _type(m.group("type")), "||".join(tags), int(m.group("ver"))
        )
