"""Score `subguard inventory` against the hand-labelled real-world set in tests/realworld/.

For every repository in tests/realworld/repos.json whose snapshot is present under --mirror-root
(a bare git directory, as `fetch` leaves it: <root>/<owner>+<name>/repo), the pinned commit is
exported into a temporary directory, `python -m subguard inventory TMP --format jsonl` is run on it
and its rows are matched to tests/realworld/labels.jsonl:

* a label is found when an inventory row has the same path and the same topic (null matches an
  unknown/absent topic) and, when both are known, the same group; exact line matches are taken
  first, then the nearest line;
* field accuracy is computed over found labels for group, topic, expression, expression_type,
  message_model and line (an unknown value in the inventory matches a null label);
* unexpected rows are inventory rows inside the repository's labelled scope that match no label;
* template rows (a factory, helper, wrapper or framework container whose group or topic is a
  parameter: `template` non-empty) are no declarations: they are counted apart and never matched,
  their instances (the call sites) are.

Usage: python bench/realworld.py [--mirror-root /work/.mirror] [--repo owner/name] [--show-misses]
Exit status: 0 (a benchmark, not a test), 2 when no mirror is present at all.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "realworld"
FIELDS = ("group", "topic", "expression", "expression_type", "message_model", "line")

Row = dict[str, Any]


@dataclass
class RepoResult:
    repo: str
    labels: int = 0
    found: int = 0
    fields_right: int = 0
    fields_total: int = 0
    unexpected: list[Row] = field(default_factory=list)
    templates: int = 0
    misses: list[Row] = field(default_factory=list)
    wrong: list[tuple[Row, Row, list[str]]] = field(default_factory=list)
    field_right: Counter[str] = field(default_factory=Counter)
    skipped: str = ""


def load_jsonl(path: Path) -> list[Row]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def find_git_dir(mirror_root: Path, repo: str) -> Path | None:
    """The bare git directory of REPO under MIRROR_ROOT, or None."""
    base = mirror_root / repo.replace("/", "+", 1)
    for cand in (base / "repo", base, *sorted(base.glob("*"))):
        if cand.is_dir() and (cand / "HEAD").is_file() and (cand / "objects").is_dir():
            return cand
    return None


def git(git_dir: Path, *args: str, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], input=data, capture_output=True, check=False)


def export_commit(git_dir: Path, commit: str, dest: Path) -> str:
    """Write COMMIT's tree into DEST; returns a note when some blobs were absent from the snapshot."""
    archive = dest.parent / "export.tar"
    with archive.open("wb") as fh:
        proc = subprocess.run(
            ["git", f"--git-dir={git_dir}", "archive", commit], stdout=fh, stderr=subprocess.PIPE, check=False
        )
    if proc.returncode == 0:
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")
        archive.unlink()
        return ""
    archive.unlink(missing_ok=True)
    # The snapshot lacks some blobs (large files are left out): write every blob that is there.
    listing = git(git_dir, "ls-tree", "-r", "-z", commit)
    if listing.returncode != 0:
        raise RuntimeError(listing.stderr.decode(errors="replace").strip())
    entries: list[tuple[str, str]] = []
    for item in listing.stdout.split(b"\0"):
        if not item:
            continue
        meta, _, raw_name = item.partition(b"\t")
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode != b"120000":
            entries.append((sha.decode(), raw_name.decode(errors="surrogateescape")))
    batch = git(git_dir, "cat-file", "--batch", data="".join(f"{sha}\n" for sha, _ in entries).encode())
    out, pos, missing = batch.stdout, 0, 0
    for _sha, name in entries:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":
            missing += 1
            continue
        size = int(header[2])
        target = dest / name
        if not target.resolve().is_relative_to(dest.resolve()):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(out[pos : pos + size])
        pos += size + 1
    return f"{missing} blob(s) absent from the snapshot were skipped"


def run_inventory(tree: Path) -> list[Row]:
    base = [sys.executable, "-m", "subguard", "inventory", str(tree), "--format", "jsonl"]
    proc = subprocess.run([*base, "--no-cache"], capture_output=True, text=True, check=False, cwd=tree)
    if proc.returncode == 2 and "no-cache" in proc.stderr:
        proc = subprocess.run(base, capture_output=True, text=True, check=False, cwd=tree)
    if proc.returncode != 0:
        raise RuntimeError(f"subguard inventory exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    for r in rows:
        r["path"] = normalise_path(str(r.get("path") or ""), tree)
    return rows


def normalise_path(path: str, tree: Path) -> str:
    p = Path(path)
    if p.is_absolute():
        try:
            return p.resolve().relative_to(tree.resolve()).as_posix()
        except ValueError:
            return p.as_posix()
    return path[2:] if path.startswith("./") else path


def in_scope(path: str, spec: Row) -> bool:
    scope: list[str] = spec.get("scope") or [""]
    exclude: list[str] = spec.get("exclude") or []
    return any(path.startswith(s) for s in scope) and not any(x in path for x in exclude)


def candidate(label: Row, row: Row) -> bool:
    if row.get("path") != label["path"] or row.get("topic") != label.get("topic"):
        return False
    lg, rg = label.get("group"), row.get("group")
    return lg is None or rg is None or lg == rg


def match(labels: list[Row], rows: list[Row]) -> dict[int, int]:
    """label index -> row index; exact lines first, then the nearest line."""
    used: set[int] = set()
    pairs: dict[int, int] = {}
    for exact in (True, False):
        for li, label in enumerate(labels):
            if li in pairs:
                continue
            best: tuple[int, int, int] | None = None
            for ri, row in enumerate(rows):
                if ri in used or not candidate(label, row):
                    continue
                dist = abs(int(row.get("line") or 0) - int(label["line"]))
                if exact and dist:
                    continue
                # at the same distance, a row whose group agrees beats one with an unknown group
                key = (dist, 0 if row.get("group") == label.get("group") else 1, ri)
                if best is None or key < best:
                    best = key
            if best is not None:
                pairs[li] = best[2]
            if li in pairs:
                used.add(pairs[li])
    return pairs


def wrong_fields(label: Row, row: Row) -> list[str]:
    return [f for f in FIELDS if label.get(f) != row.get(f)]


def score_repo(spec: Row, labels: list[Row], mirror_root: Path) -> RepoResult:
    res = RepoResult(repo=spec["repo"], labels=len(labels))
    git_dir = find_git_dir(mirror_root, spec["repo"])
    if git_dir is None:
        res.skipped = f"no mirror under {mirror_root}"
        return res
    with tempfile.TemporaryDirectory(prefix="sg-realworld-") as tmp:
        tree = Path(tmp) / "tree"
        tree.mkdir()
        try:
            note = export_commit(git_dir, spec["commit"], tree)
            rows = run_inventory(tree)
        except (RuntimeError, OSError, tarfile.TarError) as exc:
            res.skipped = str(exc)
            return res
    if note:
        res.skipped = note
    res.templates = sum(1 for r in rows if r.get("template"))
    rows = [r for r in rows if not r.get("template")]
    pairs = match(labels, rows)
    for li, label in enumerate(labels):
        if li not in pairs:
            res.misses.append(label)
            continue
        row = rows[pairs[li]]
        res.found += 1
        bad = wrong_fields(label, row)
        res.fields_total += len(FIELDS)
        res.fields_right += len(FIELDS) - len(bad)
        res.field_right.update(f for f in FIELDS if f not in bad)
        if bad:
            res.wrong.append((label, row, bad))
    matched = set(pairs.values())
    res.unexpected = [r for i, r in enumerate(rows) if i not in matched and in_scope(str(r.get("path")), spec)]
    return res


def pct(num: int, den: int) -> str:
    return f"{100.0 * num / den:5.1f}%" if den else "    - "


def show(value: object) -> str:
    return "null" if value is None else json.dumps(value, ensure_ascii=False)


def report(results: list[RepoResult], show_misses: bool) -> None:
    width = max([len("repo")] + [len(r.repo) for r in results])
    print(f"{'repo'.ljust(width)}  labels  found  recall  fields  unexpected  note")
    for r in results:
        if r.skipped and not r.found and not r.misses:
            print(f"{r.repo.ljust(width)}  {r.labels:6}      -       -       -           -  skipped: {r.skipped}")
            continue
        print(
            f"{r.repo.ljust(width)}  {r.labels:6}  {r.found:5}  {pct(r.found, r.labels)}  "
            f"{pct(r.fields_right, r.fields_total)}  {len(r.unexpected):10}  {r.skipped}"
        )
    scored = [r for r in results if r.found or r.misses]
    labels = sum(r.labels for r in scored)
    found = sum(r.found for r in scored)
    right = sum(r.fields_right for r in scored)
    total = sum(r.fields_total for r in scored)
    unexpected = sum(len(r.unexpected) for r in scored)
    print(
        f"{'TOTAL'.ljust(width)}  {labels:6}  {found:5}  {pct(found, labels)}  {pct(right, total)}  {unexpected:10}  "
        f"{len(scored)} repos scored; {sum(r.templates for r in scored)} template rows set apart"
    )
    per_field: Counter[str] = Counter()
    for r in scored:
        per_field.update(r.field_right)
    print("field accuracy over found labels: " + ", ".join(f"{f} {pct(per_field[f], found).strip()}" for f in FIELDS))
    by_pattern: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in scored:
        missed = {id(m) for m in r.misses}
        for lab in LABELS_BY_REPO.get(r.repo, []):
            by_pattern[lab["pattern"]][0] += 1
            by_pattern[lab["pattern"]][1] += 0 if id(lab) in missed else 1
    print(
        "recall by pattern: "
        + ", ".join(
            f"{p} {f}/{n}" for p, (n, f) in sorted(by_pattern.items(), key=lambda kv: (kv[1][1] / kv[1][0], kv[0]))
        )
    )
    if not show_misses:
        return
    for r in scored:
        if not (r.misses or r.wrong or r.unexpected):
            continue
        print(f"\n== {r.repo}")
        for m in r.misses:
            print(
                f"  MISS  {m['path']}:{m['line']}  [{m['pattern']}]  group={show(m.get('group'))} "
                f"topic={show(m.get('topic'))} expression={show(m.get('expression'))}"
            )
        for lab, row, bad in r.wrong:
            diffs = "; ".join(f"{f}: label {show(lab.get(f))} got {show(row.get(f))}" for f in bad)
            print(f"  WRONG {lab['path']}:{lab['line']}  [{lab['pattern']}]  {diffs}")
        for u in r.unexpected:
            print(
                f"  UNEXPECTED {u.get('path')}:{u.get('line')}  group={show(u.get('group'))} "
                f"topic={show(u.get('topic'))} expression={show(u.get('expression'))}"
            )


LABELS_BY_REPO: dict[str, list[Row]] = {}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--mirror-root", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--repo", action="append", help="score only this owner/name (repeatable)")
    ap.add_argument("--show-misses", action="store_true", help="list every miss, wrong field and unexpected row")
    args = ap.parse_args(argv)
    specs: list[Row] = json.loads((DATA / "repos.json").read_text(encoding="utf-8"))
    for lab in load_jsonl(DATA / "labels.jsonl"):
        LABELS_BY_REPO.setdefault(lab["repo"], []).append(lab)
    if args.repo:
        specs = [s for s in specs if s["repo"] in set(args.repo)]
    if not any(find_git_dir(args.mirror_root, s["repo"]) for s in specs):
        print(f"no mirror of any labelled repository under {args.mirror_root}", file=sys.stderr)
        return 2
    results: list[RepoResult] = []
    for spec in specs:
        labels = [lab for lab in LABELS_BY_REPO.get(spec["repo"], []) if lab["commit"] == spec["commit"]]
        res = score_repo(spec, labels, args.mirror_root)
        if res.skipped and not res.found and not res.misses:
            print(f"skipping {spec['repo']}: {res.skipped}", file=sys.stderr)
        results.append(res)
    report(results, args.show_misses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
