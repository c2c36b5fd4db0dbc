"""Java extraction speed: `python bench/java_speed.py [TREE] [--files N] [--rounds N]`.

Without TREE a synthetic multi-module tree of realistic Java files (listeners, push consumers,
5.x builders, constants classes and plain service classes) plus Spring config is generated in a
temporary directory. The whole scan (discover, prefilter, Spring + Java extraction) is timed in
each round beside two references over the same files: tree-sitter parsing every Java file alone
(the floor of any tree-sitter extractor) and `grep -rl rocketmq`. Medians and ratios are printed.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tree_sitter_java
from tree_sitter import Language, Parser

from subguard.core.config import Config
from subguard.extract import load_extractors
from subguard.scan.extraction import scan_repo

LISTENER = """package com.acme.m{m}.svc;

import com.acme.m{m}.common.Names{m};
import org.apache.rocketmq.spring.annotation.MessageModel;
import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.springframework.stereotype.Component;

/** Listener {i} of module {m}. */
@Component
@RocketMQMessageListener(consumerGroup = Names{m}.GROUP + "_{i}", topic = "${{app.topic{i}:topic_{i}}}",
        selectorExpression = "tagA || tagB", messageModel = MessageModel.CLUSTERING)
public class Listener{i} implements RocketMQListener<String> {{
    private final java.util.List<String> seen = new java.util.ArrayList<>();

    @Override
    public void onMessage(String message) {{
        if (message == null || message.isEmpty()) {{
            return;
        }}
        for (int k = 0; k < 3; k++) {{
            seen.add(message + k);
        }}
    }}
}}
"""
PUSH = """package com.acme.m{m}.svc;

import static com.acme.m{m}.common.Names{m}.TOPIC;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;

public class Push{i} {{
    private DefaultMQPushConsumer consumer;

    public void start() throws Exception {{
        consumer = new DefaultMQPushConsumer("push_group_{i}");
        consumer.setNamesrvAddr("ns:9876");
        consumer.subscribe(TOPIC, "a || b");
        consumer.subscribe("audit_{i}", MessageSelector.bySql("x > {i}"));
        consumer.setMessageModel(MessageModel.BROADCASTING);
        consumer.registerMessageListener((org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently) (msgs, ctx) -> null);
        consumer.start();
    }}
}}
"""
PLAIN = """package com.acme.m{m}.svc;

import java.util.List;
import java.util.Map;

/** A service class without a message client (skipped by the prefilter). */
public class Service{i} {{
    private final Map<String, Integer> counts = new java.util.HashMap<>();

    public int count(List<String> items) {{
        int total = 0;
        for (String item : items) {{
            total += counts.merge(item, 1, Integer::sum);
        }}
        return total;
    }}
}}
"""
NAMES = """package com.acme.m{m}.common;

public final class Names{m} {{
    public static final String PREFIX = "m{m}_";
    public static final String GROUP = PREFIX + "group";
    public static final String TOPIC = PREFIX + "topic";
}}
"""
YML = "app:\n  topic0: t0\n---\nspring:\n  config:\n    activate:\n      on-profile: prod\napp:\n  topic0: t0_prod\n"


def generate(root: Path, files: int) -> None:
    """A tree of `files` Java files: 40% listeners, 20% push consumers, 40% plain classes."""
    per_module = 50
    for n in range(files):
        m, i = divmod(n, per_module)
        mod = root / f"module{m}"
        src = mod / "src/main/java/com/acme" / f"m{m}"
        if i == 0:
            (src / "common").mkdir(parents=True, exist_ok=True)
            (src / "svc").mkdir(parents=True, exist_ok=True)
            (mod / "src/main/resources").mkdir(parents=True, exist_ok=True)
            (mod / "pom.xml").write_text("<project/>\n")
            (mod / "src/main/resources/application.yml").write_text(YML)
            (src / "common" / f"Names{m}.java").write_text(NAMES.format(m=m))
            continue
        kind = n % 5
        template, name = (LISTENER, "Listener") if kind < 2 else (PUSH, "Push") if kind == 2 else (PLAIN, "Service")
        (src / "svc" / f"{name}{i}.java").write_text(template.format(m=m, i=i))


def parse_only(files: list[Path]) -> float:
    """Seconds to read and parse every file with tree-sitter Java alone (the parser's floor)."""
    parser = Parser(Language(tree_sitter_java.language()))
    start = time.perf_counter()
    for path in files:
        parser.parse(path.read_bytes())
    return time.perf_counter() - start


def grep_only(tree: Path) -> float:
    """Seconds for `grep -rl rocketmq` over the tree."""
    start = time.perf_counter()
    subprocess.run(["grep", "-rl", "rocketmq", str(tree)], capture_output=True, check=False)
    return time.perf_counter() - start


def run(tree: Path, rounds: int) -> int:
    java_files = sorted(tree.rglob("*.java"))
    java = len(java_files)
    extractors = load_extractors(["spring", "java"])
    scans: list[float] = []
    parses: list[float] = []
    greps: list[float] = []
    result = None
    for _ in range(rounds):
        greps.append(grep_only(tree))
        parses.append(parse_only(java_files))
        start = time.perf_counter()
        result = scan_repo(tree, Config(), extractors=extractors)
        scans.append(time.perf_counter() - start)
    assert result is not None
    scan, parse, grep = (statistics.median(t) for t in (scans, parses, greps))
    parsed = sum(1 for r in result.files if r.path.endswith(".java") and r.status.value == "parsed")
    print(f"tree: {tree}  (median of {rounds} rounds, all three timed in each round)")
    print(f"java files: {java} ({parsed} parsed, {java - parsed} skipped by prefilter or failed)")
    print(f"consumers: {len(result.consumers)}")
    print(
        f"subguard scan (spring + java):     {scan:6.2f} s  {java / scan:8.0f} java files/s"
        f"  ({parsed / scan:.0f} parsed java files/s)"
    )
    print(f"tree-sitter parse of every file:    {parse:6.2f} s  {java / parse:8.0f} java files/s")
    print(f"grep -rl rocketmq:                  {grep:6.2f} s  {java / grep:8.0f} java files/s")
    print(f"ratio scan/parse-only: {scan / parse:.2f}x   ratio scan/grep: {scan / grep:.2f}x")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tree", nargs="?", type=Path)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if args.tree is not None:
        return run(args.tree, args.rounds)
    with tempfile.TemporaryDirectory(prefix="subguard-java-bench-") as tmp:
        generate(Path(tmp), args.files)
        return run(Path(tmp), args.rounds)


if __name__ == "__main__":
    sys.exit(main())
