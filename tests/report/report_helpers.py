"""Findings and docs shared by the reporter tests (real records, built by hand)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from subguard.core.members import MEMBERS, Member
from subguard.core.model import Finding, Location, Related, RuleDoc, Severity, Suppression, fingerprint
from subguard.report import ReportContext, Root

ROOT = Path(__file__).resolve().parent / "_root"  # never read: renderers only compute paths from it

DOCS = {
    "SG102": RuleDoc(
        id="SG102",
        name="group-tag-set-mismatch",
        severity=Severity.ERROR,
        scope="group/topic",
        summary="Consumers of one group subscribe a topic with different tags.",
        what="Flags groups whose members subscribe the same topic with different tag sets.",
        why="The broker keeps one subscription per topic per group; the last heartbeat wins.",
        example='consumer.subscribe("TopicTest2", "tag1")',
        instead="Use one group per tag set.",
        references=("https://rocketmq.apache.org/docs/",),
    ),
    "SG401": RuleDoc(
        id="SG401",
        name="malformed-tag-expression",
        severity=Severity.WARNING,
        scope="subscription",
        summary="A tag expression the broker parses differently than written.",
    ),
}


def seed002_finding(**update: object) -> Finding:
    a = Location(path="app/consumer1.py", line=7, column=1, repo="shop")
    b = Location(path="app/consumer2.py", line=9, column=5, repo="shop")
    f = Finding(
        rule="SG102",
        severity=Severity.ERROR,
        message="group test-consumer subscribes TopicTest2 with different tags: tag1 vs tag2",
        location=a,
        related=(Related(location=b, message="subscribes 'tag2'"),),
        group="test-consumer",
        topic="TopicTest2",
        fingerprint=fingerprint("SG102", "test-consumer", "TopicTest2"),
        properties=(
            (
                MEMBERS,
                (
                    Member(
                        location=a, topic="TopicTest2", expression="tag1", model="CLUSTERING", client="python-native-4x"
                    ),
                    Member(
                        location=b,
                        message="subscribes 'tag2'",
                        topic="TopicTest2",
                        expression="tag2 || tag3",
                        model="CLUSTERING",
                    ),
                ),
            ),
        ),
    )
    return f.model_copy(update=update)


def flat_finding(**update: object) -> Finding:
    f = Finding(
        rule="SG401",
        severity=Severity.WARNING,
        message="tag expression 'a,b' uses ',' which is not a separator",
        location=Location(path="app/bad.py", line=3, column=30, repo="shop"),
        topic="T",
        group="g2",
        fingerprint=fingerprint("SG401", "g2", "T", "app/bad.py"),
    )
    return f.model_copy(update=update)


def suppressed_finding() -> Finding:
    return flat_finding(
        rule="SG401",
        message="waived one",
        location=Location(path="app/old.py", line=1, column=1, repo="shop"),
        suppressed=Suppression(kind="inline", reason="legacy, removed in Q3"),
        fingerprint="f" * 32,
    )


def context(
    tmp: Path | None = None,
    *,
    parsed: int = 3,
    skipped: int = 2,
    color: bool = False,
    roots: tuple[Root, ...] | None = None,
) -> ReportContext:
    """Root `shop` under `tmp` (workdir `tmp`), or the never-read `_root` folder next to this file."""
    workdir = tmp or ROOT.parent
    root = (tmp / "shop") if tmp else ROOT
    return ReportContext(
        roots=roots if roots is not None else (Root("shop", str(root)),),
        workdir=str(workdir),
        parsed=parsed,
        skipped=skipped,
        failed=0,
        color=color,
    )


def at_root(ctx: ReportContext) -> ReportContext:
    """The same context with the scan root as the working directory (paths shown root-relative)."""
    return dataclasses.replace(ctx, workdir=ctx.roots[0].path)
