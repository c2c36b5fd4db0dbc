"""What a first, default `subguard check` shows on each real-world repository, and what it keeps in JSON.

For every repository of tests/realworld/repos.json whose snapshot is under --mirror-root, the pinned
commit is exported (as bench/realworld.py does) and `subguard check TREE --format json` is run in it
with no config of ours, in a folder named like the repository (as `git clone` names it). Per repository it prints the findings a default text run shows (errors and
warnings), those it only counts because only test or example code (or a placeholder group) is
involved, the notes it only counts, and the diagnostic (SG9xx) notes among them; with --list, every
finding as a row of tests/realworld/findings.md (`| repo | rule | location | verdict | why |`, the
verdict left for a person to judge), so a new run can be diffed against the judged table.

Usage: python bench/realworld_findings.py [--mirror-root /work/.mirror] [--repo owner/name] [--list]
Exit status: 0 (a benchmark, not a test), 2 when no mirror is present at all.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from realworld import DATA, export_commit, find_git_dir  # noqa: E402

Row = dict[str, Any]
SHOWN = ("error", "warning")


def check(tree: Path) -> list[Row]:
    proc = subprocess.run(
        [sys.executable, "-m", "subguard", "check", ".", "--format", "json", "--fail-on", "none", "--no-cache"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tree,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"subguard check exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    data = json.loads(proc.stdout)
    rows: list[Row] = data if isinstance(data, list) else [*data.get("findings", []), *data.get("diagnostics", [])]
    return [r for r in rows if not r.get("suppressed")]


def state(row: Row) -> str:
    """What a default text run does with a finding: shows it, counts it (test/example code or a
    placeholder group: `marked`), or counts it as a note."""
    if row["severity"] not in SHOWN:
        return "note"
    return f"marked {row['code']}" if row.get("code") else "shown"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--mirror-root", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--repo", action="append", default=[])
    ap.add_argument("--list", action="store_true", help="print every finding as a findings.md row")
    args = ap.parse_args(argv)
    specs = json.loads((DATA / "repos.json").read_text(encoding="utf-8"))
    totals: Counter[str] = Counter()
    listed: list[str] = []
    present = 0
    print(f"{'repo':38} {'shown':>6} {'marked':>6} {'notes':>6} {'sg9xx':>6}  rules shown")
    for spec in specs:
        if args.repo and spec["repo"] not in args.repo:
            continue
        git_dir = find_git_dir(args.mirror_root, spec["repo"])
        if git_dir is None:
            print(f"{spec['repo']:38} (no mirror)")
            continue
        present += 1
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp) / spec["repo"].split("/")[-1]  # as `git clone` names the checkout
            tree.mkdir()
            export_commit(git_dir, spec["commit"], tree)
            try:
                rows = check(tree)
            except RuntimeError as exc:
                print(f"{spec['repo']:38} failed: {exc}")
                totals.update(failed=1)
                continue
        shown = [r for r in rows if r["severity"] in SHOWN and not r.get("code")]
        marked = [r for r in rows if r["severity"] in SHOWN and r.get("code")]  # test/example/placeholder: counted
        notes = [r for r in rows if r["severity"] not in SHOWN]
        diag = [r for r in notes if str(r["rule"]).startswith("SG9")]
        rules = Counter(str(r["rule"]) for r in shown)
        print(
            f"{spec['repo']:38} {len(shown):6} {len(marked):6} {len(notes):6} {len(diag):6}  "
            f"{' '.join(f'{k}x{v}' for k, v in sorted(rules.items()))}"
        )
        totals.update(shown=len(shown), marked=len(marked), notes=len(notes), diag=len(diag), repos=1)
        listed += [
            f"| {spec['repo']} | {r['rule']} | {r['path']}:{r['line']} | ? | {state(r)}: {r['message'][:160]} |"
            for r in rows
        ]
    if not present:
        print("no mirror present", file=sys.stderr)
        return 2
    failed = f", {totals['failed']} failed" if totals["failed"] else ""
    print(
        f"{'TOTAL':38} {totals['shown']:6} {totals['marked']:6} {totals['notes']:6} {totals['diag']:6}  over {totals['repos']} repos{failed}"
    )
    if args.list:
        print("\n".join(listed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
