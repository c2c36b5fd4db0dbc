"""Text rendering of a simulation report: small aligned tables (JSON is `Report.to_json`)."""

from __future__ import annotations

from collections.abc import Sequence

from subguard.simulate.runs import Report


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    cells = [[str(h) for h in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]


EVENTS = {
    "subscription_not_exist": "code 24: a pull for a topic the broker holds no subscription of",
    "subscription_not_latest": "code 25: a pull carrying an older subscription version than the broker's",
    "offset_moved": "an offset jumped forward over unconsumed messages (a broadcasting restart without "
    "its local offsets starts at the max offset); silent in RocketMQ, not code 21",
    "subscription_changed": "a heartbeat replaced the broker's stored subscription of a topic (first "
    "registration, a newer version, or a topic added or removed)",
}


def _pct(rate: float) -> str:
    return f"{rate * 100:.1f}%"


def render_text(report: Report, title: str = "") -> str:
    out: list[str] = [f"{title} ({report.runs} runs)" if title else f"{report.runs} runs", ""]
    out += ["consumers"] + _table(
        ("name", "received mean", "min", "max", "histogram (count: runs)"),
        [
            (name, f"{s.mean:.2f}", s.min, s.max, " ".join(f"{v}:{n}" for v, n in s.histogram))
            for name, s in report.consumers.items()
        ],
    )
    out += ["", "tags"] + _table(
        ("tag", "sent", "delivered", "lost", "skipped", "stuck", "unwanted", "loss rate"),
        [
            (
                tag,
                f"{t.sent:g}",
                f"{t.delivered_mean:.2f}",
                f"{t.lost_mean:.2f}",
                f"{t.skipped_mean:.2f}",
                f"{t.stuck_mean:.2f}",
                f"{t.unwanted_mean:.2f}",
                _pct(t.loss_rate),
            )
            for tag, t in report.tags.items()
        ],
    )
    out += ["", "events (per run)"] + _table(
        ("event", "mean", "max", "runs with", "meaning"),
        [
            (name, f"{s.mean:.2f}", s.max, sum(n for v, n in s.histogram if v), EVENTS.get(name, ""))
            for name, s in report.events.items()
        ],
    )
    if report.winners:
        out += ["", "broker's subscription held while pulling"] + _table(
            ("member", "runs won", "share of pulled messages"),
            [(name, w["runs"], _pct(w["share"])) for name, w in report.winners.items()],
        )
    return "\n".join(out)
