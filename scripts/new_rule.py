"""Scaffold a rule: its policy YAML, its fixture folder, and README's regenerated rule table.

    python scripts/new_rule.py SG204 group-consume-mode-mismatch --scope group
    python scripts/new_rule.py SG510 live-something --scope evidence
    python scripts/new_rule.py --sync-readme          # only regenerate README's rule table

The YAML holds every section a rule needs (message, condition, docs: what, why, example, instead,
references) with TODO text to replace; the fixture folder holds one case to edit: a repository case
(`ruleid:` / `ok:` annotations) or, for evidence rules, `logs/` with `hit/`, `ok/` and `expect.txt`.
Then run `python -m pytest tests/engine/test_rule_fixtures.py tests/test_policies_meta.py -k <ID>`.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCOPES = ("subscription", "consumer", "group", "deployment", "consumer+deployment", "evidence")
# a condition that loads for each scope: the author replaces it
STARTER_CONDITION = {
    "subscription": "{field: expression_type, op: eq, value: SQL92}",
    "consumer": "{field: topic_count, op: gt, value: 1}",
    "group": "{field: member_count, op: gt, value: 1}",
    "deployment": "{field: replicas, op: gt, value: 1}",
    "consumer+deployment": "{field: message_model, op: eq, value: BROADCASTING}",
}
BEGIN, END = "<!-- rules:begin", "<!-- rules:end -->"


def policy_yaml(rule: str, name: str, scope: str, severity: str) -> str:
    """The policy file, every section present; TODO marks what the author writes."""
    head = [f"id: {rule}", f"name: {name}", f"severity: {severity}", f"scope: {scope}", "fix: none"]
    if scope == "evidence":
        head.append("implemented_by: subguard.evidence.classify:TODO_function_that_emits_it")
        head.append("message: \"Group '{group}': TODO what the evidence shows\"")
    else:
        head.append("message: \"TODO one line naming the subject, e.g. group '{group}'\"")
        head.append(f"condition: {STARTER_CONDITION[scope]}")
    docs = """docs:
  summary: TODO one line - what goes wrong.
  what: |
    TODO what the rule compares, and what it leaves to other rules.
  why: |
    TODO what RocketMQ does with it (broker, client), and what users lose; cite the source.
  example: |
    TODO the smallest code or config that triggers it.
  instead: |
    TODO the same code, fixed.
  references:
    - TODO a public link (RocketMQ docs, a source file at a tag, an issue)
"""
    return "\n".join(head) + "\n" + docs


def repo_case(rule: str) -> dict[str, str]:
    """A repository case: two Python consumers, one line that must trigger, one that must not."""
    body = """from rocketmq.client import PushConsumer


def handle(msg):
    return None


# TODO make this consumer trigger {rule}, and keep the annotation on the line the finding names
# ruleid: {rule}
consumer = PushConsumer("GID_TODO")
consumer.subscribe("TopicTodo", handle, expression="tag1")

# TODO a realistic look-alike that must not trigger it
# ok: {rule}
other = PushConsumer("GID_TODO_OK")
other.subscribe("TopicTodo", handle, expression="tag1")
"""
    return {"consumer_a.py": body.format(rule=rule)}


def evidence_case(rule: str) -> dict[str, str]:
    return {
        "hit/broker.log": "TODO broker or client log lines that must produce the rule\n",
        "ok/broker.log": "TODO the near miss: look-alike lines that must not\n",
        "expect.txt": f"# one line per finding on hit/: RULE GROUP PATH:LINE\n{rule} GID_TODO hit/broker.log:1\n",
    }


def rule_table() -> str:
    out = subprocess.run(
        [sys.executable, "-m", "subguard", "rules", "--format", "markdown"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return out.stdout


def sync_readme(readme: Path) -> bool:
    """Replace README's generated rule table; True when it changed."""
    text = readme.read_text(encoding="utf-8")
    start = text.index("\n", text.index(BEGIN)) + 1
    end = text.index(END)
    new = text[:start] + rule_table() + text[end:]
    if new == text:
        return False
    readme.write_text(new, encoding="utf-8")
    return True


def scaffold(rule: str, name: str, scope: str, severity: str, policies: Path, fixtures: Path) -> list[Path]:
    """Write the YAML and the case files; never overwrite. Returns what was written."""
    yaml_path = policies / f"{rule}-{name}.yaml"
    case = fixtures / rule / ("logs" if scope == "evidence" else "basic")
    files = {yaml_path: policy_yaml(rule, name, scope, severity)}
    files.update(
        {case / rel: text for rel, text in (evidence_case(rule) if scope == "evidence" else repo_case(rule)).items()}
    )
    clash = [p for p in files if p.exists()]
    if clash:
        raise SystemExit(f"new_rule: already exists: {', '.join(map(str, clash))}")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rule", nargs="?", help="rule id, e.g. SG204 (letters then digits)")
    parser.add_argument("name", nargs="?", help="kebab-case name, e.g. group-consume-mode-mismatch")
    parser.add_argument("--scope", choices=SCOPES, default="group")
    parser.add_argument("--severity", choices=("error", "warning", "note"), default="warning")
    parser.add_argument("--policies", type=Path, default=ROOT / "policies")
    parser.add_argument("--fixtures", type=Path, default=ROOT / "tests" / "rules")
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md", help="README to resync ('' for none)")
    parser.add_argument("--sync-readme", action="store_true", help="only regenerate README's rule table")
    args = parser.parse_args(argv)
    if not args.sync_readme:
        if not args.rule or not args.name:
            parser.error("RULE and NAME are required (or --sync-readme)")
        if not re.fullmatch(r"[A-Za-z]+[0-9]+", args.rule) or not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", args.name):
            parser.error("RULE is letters then digits (SG204); NAME is kebab-case")
        for path in scaffold(args.rule, args.name, args.scope, args.severity, args.policies, args.fixtures):
            print(f"wrote {path}")
    if str(args.readme) and args.readme.is_file() and sync_readme(args.readme):
        print(f"regenerated the rule table in {args.readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
