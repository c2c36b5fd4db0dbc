"""`subguard check --org-map` over a generated organisation (map built without Spark; the audit's own
map is `test_orgmap_audit.py`): the cross-repository finding on this repository's line, its fix, renamed
and unknown repositories, stale maps, and broken maps as exit 2 with one line."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from subguard.audit import orgmap
from subguard.cli.main import main
from tests.audit.orgmap_helpers import LINE, build_map, organisation, write_repo

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def org(tmp_path: Path) -> tuple[Path, Path]:
    org = organisation(tmp_path)
    return org, build_map(org, tmp_path / "audit" / orgmap.FILE_NAME)


def check(repo: Path, monkeypatch: pytest.MonkeyPatch, *args: str, fmt: str = "json") -> tuple[int, Any]:
    monkeypatch.chdir(repo)
    out = repo.parent / f"{repo.name}.{fmt}"
    code = main(["check", ".", "--no-cache", "--fail-on", "error", "--format", fmt, "-o", str(out), *args])
    text = out.read_text(encoding="utf-8") if out.exists() else ""
    return code, (json.loads(text) if fmt in ("json", "sarif") and text else text)


def findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [*report["findings"], *report.get("diagnostics", [])] if isinstance(report, dict) else report


def test_cross_repo_finding_on_this_line_citing_the_other_repo(
    org: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, omap = org
    code, alone = check(root / "billing", monkeypatch)
    assert code == 0 and not [f for f in findings(alone) if f["rule"] == "SG102"]  # alone, nothing to see
    code, report = check(root / "billing", monkeypatch, "--org-map", str(omap))
    assert code == 1
    (sg102,) = [f for f in findings(report) if f["rule"] == "SG102"]
    assert (sg102["repo"], sg102["path"], sg102["line"]) == ("billing", "billing/consumer.py", LINE)
    assert [(r["repo"], r["path"], r["line"]) for r in sg102["related"]] == [("orders", "orders/consumer.py", LINE)]
    assert sg102["related"][0]["org_map"] == dt.datetime.now(dt.timezone.utc).date().isoformat()
    assert f"orders:orders/consumer.py:{LINE}" in sg102["message"] and sg102["impact"]
    # nothing outside this repository is a location to fix here
    assert all(f["repo"] == "billing" for f in findings(report))


def test_the_other_side_is_reported_on_its_own_line(org: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    root, omap = org
    code, report = check(root / "orders", monkeypatch, "--org-map", str(omap))
    (sg102,) = [f for f in findings(report) if f["rule"] == "SG102"]
    assert (sg102["repo"], sg102["path"]) == ("orders", "orders/consumer.py")
    assert [r["repo"] for r in sg102["related"]] == ["billing"]
    code, report = check(root / "shipping", monkeypatch, "--org-map", str(omap))
    assert code == 0 and not findings(report)


def test_the_fix_in_the_pull_request_replaces_the_stale_row(
    org: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, omap = org
    write_repo(root, "billing", "created||paid")  # the pull request's fix; the map still has the old tags
    code, report = check(root / "billing", monkeypatch, "--org-map", str(omap))
    assert not [f for f in findings(report) if f["rule"] == "SG102"]
    # what remains is the group shared by two services, cited from the map, never billing's old row
    assert [(f["rule"], [(r["repo"], r["path"]) for r in f["related"]]) for f in findings(report)] == [
        ("SG203", [("orders", "orders/consumer.py")])
    ]
    (root / "billing" / "billing" / "consumer.py").unlink()  # a consumer removed in the pull request no longer counts
    write_repo(root, "billing", "created||refunded", path="billing/other.py", group="GID_OTHER")
    code, report = check(root / "orders", monkeypatch, "--org-map", str(omap))
    assert code == 1  # from orders, billing's map row still disagrees: the map is what the audit saw
    code, report = check(root / "billing", monkeypatch, "--org-map", str(omap))
    assert code == 0 and not findings(report)  # billing no longer declares GID_ORDERS: its old row is gone


def test_text_and_markdown_mark_rows_of_the_map(org: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    root, omap = org
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    _, text = check(root / "billing", monkeypatch, "--org-map", str(omap), fmt="text")
    assert f"orders:orders/consumer.py:{LINE} (org map {today})" in text
    assert f"\n      billing/consumer.py:{LINE} " in text  # this repository's member, as always
    _, md = check(root / "billing", monkeypatch, "--org-map", str(omap), fmt="markdown")
    assert f"`orders:orders/consumer.py:{LINE} (org map {today})`" in md
    _, gh = check(root / "billing", monkeypatch, "--org-map", str(omap), fmt="github")
    assert (
        f"file=billing/consumer.py,line={LINE}" in gh
        and f"also: orders:orders/consumer.py:{LINE} (org map {today})" in gh
    )


def test_sarif_names_the_repository(
    org: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, sarif_validator: Any
) -> None:
    root, omap = org
    _, sarif = check(root / "billing", monkeypatch, "--org-map", str(omap), fmt="sarif")
    sarif_validator.validate(sarif)
    (result,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "SG102"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "billing/consumer.py"
    (rel,) = result["relatedLocations"]
    assert "physicalLocation" not in rel  # not a file of this checkout
    assert rel["properties"]["repository"] == "orders"
    assert rel["logicalLocations"][0]["fullyQualifiedName"] == f"orders:orders/consumer.py:{LINE}"
    assert f"orders:orders/consumer.py:{LINE}" in result["message"]["text"]


def test_a_repository_the_map_does_not_know(
    org: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root, omap = org
    new = write_repo(root, "payments", "created||refunded")
    code, report = check(new, monkeypatch, "--org-map", str(omap))
    (sg102,) = [f for f in findings(report) if f["rule"] == "SG102"]
    assert sorted(r["repo"] for r in sg102["related"]) == ["billing", "orders"]
    assert "has no repository 'payments'" in capsys.readouterr().err


def test_a_renamed_repository_is_recognised(
    org: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root, omap = org
    renamed = root / "billing-service"
    shutil.copytree(root / "billing", renamed)
    write_repo(root, "billing-service", "created||paid", path="billing/consumer.py")  # fixed under its new name
    code, report = check(renamed, monkeypatch, "--org-map", str(omap))
    # its old rows under 'billing' are not taken for another repository's
    assert not [f for f in findings(report) if f["rule"] == "SG102"]
    assert {r["repo"] for f in findings(report) for r in f["related"]} == {"orders"}
    err = capsys.readouterr().err
    assert "under 'billing'" in err and 'repo = "billing"' in err
    (renamed / ".subguard.yaml").write_text("repo: billing\n", encoding="utf-8")
    code, report = check(renamed, monkeypatch, "--org-map", str(omap))
    assert not [f for f in findings(report) if f["rule"] == "SG102"] and "org map" not in capsys.readouterr().err


def test_config_org_map_and_a_stale_map(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    org = organisation(tmp_path)
    old = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=10)
    build_map(org, tmp_path / "maps" / orgmap.FILE_NAME, written=old)
    (org / "billing" / ".subguard.yaml").write_text(f"org-map: ../../maps/{orgmap.FILE_NAME}\n", encoding="utf-8")
    code, _ = check(org / "billing", monkeypatch)
    assert code == 1
    err = capsys.readouterr().err.splitlines()
    stale = [line for line in err if "days old" in line]
    assert len(stale) == 1 and "is 10 days old" in stale[0] and "org-map-max-age is 7 days" in stale[0]
    (org / "billing" / ".subguard.yaml").write_text(
        f"org-map: ../../maps/{orgmap.FILE_NAME}\norg-map-max-age: 30\n", encoding="utf-8"
    )
    check(org / "billing", monkeypatch)
    assert "days old" not in capsys.readouterr().err


def _one_error_line(code: int, err: str, *words: str) -> None:
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("subguard: error: ") and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], lines[0]


def _broken(path: Path, kind: str) -> None:
    if kind == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "json":
        path.write_text('{"findings": []}\n', encoding="utf-8")
    elif kind == "foreign-sqlite":
        path.unlink()
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE t (x)")
        conn.close()
    elif kind == "other-format":
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE meta SET value = 'acme-map' WHERE key = 'format'")
        conn.close()
    elif kind == "newer":
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE meta SET value = '99' WHERE key = 'version'")
        conn.close()
    elif kind == "missing":
        path.unlink()


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("truncated", ["truncated"]),
        ("empty", ["empty"]),
        ("json", ["not a subguard org map", "SQLite"]),
        ("foreign-sqlite", ["not a subguard org map"]),
        ("other-format", ["not a subguard org map", "acme-map"]),
        ("newer", ["version 99", "newer subguard", "upgrade"]),
        ("missing", ["not found"]),
    ],
)
def test_broken_maps_are_exit_2_with_one_line(
    org: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    words: list[str],
) -> None:
    root, omap = org
    _broken(omap, kind)
    capsys.readouterr()
    code, _ = check(root / "billing", monkeypatch, "--org-map", str(omap))
    _one_error_line(code, capsys.readouterr().err, str(omap), *words)


def test_an_audit_output_folder_is_accepted(org: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    root, omap = org
    code, _ = check(root / "billing", monkeypatch, "--org-map", str(omap.parent))
    assert code == 1


def test_only_the_groups_asked_for_are_read(org: tuple[Path, Path]) -> None:
    _, omap = org
    m = orgmap.OrgMap.open(str(omap))
    try:
        plan = " ".join(
            str(r)
            for r in m._conn.execute(
                'EXPLAIN QUERY PLAN SELECT record FROM consumers WHERE "group" IN (?)', ("GID_ORDERS",)
            )
        )
        assert "consumers_group" in plan
        assert {r[0] for r in m.members(["GID_SHIPPING"])} == {"shipping"}
        assert m.version == orgmap.VERSION and m.meta["format"] == orgmap.FORMAT
    finally:
        m.close()


def test_the_check_path_loads_no_spark(org: tuple[Path, Path]) -> None:
    """The reader and the check never import pyspark, pyarrow or py4j (a fresh interpreter)."""
    root, omap = org
    code = (
        "import sys; from subguard.cli.main import main\n"
        f"rc = main(['check', {str(root / 'billing')!r}, '--no-cache', '--org-map', {str(omap)!r}, '-o', '/dev/null'])\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'pyspark', 'pyarrow', 'py4j'})\n"
        "assert rc == 1 and not heavy, (rc, heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr


def test_the_action_passes_its_org_map_input(org: tuple[Path, Path], tmp_path: Path) -> None:
    """scripts/action-check.sh (the Action's check step) with the `org-map` input."""
    import os

    root, omap = org
    outputs = tmp_path / "github_output"
    env = {
        **os.environ,
        "SG_ORG_MAP": str(omap),
        "GITHUB_OUTPUT": str(outputs),
        "SG_BASE": "none",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env.pop("GITHUB_EVENT_PATH", None)
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "action-check.sh")],
        cwd=root / "billing",
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr  # findings fail the Action's last step, after the upload
    assert f"::error file=billing/consumer.py,line={LINE}" in proc.stdout
    assert f"also: orders:orders/consumer.py:{LINE} (org map " in proc.stdout
    assert "exit-code=1" in outputs.read_text(encoding="utf-8")


def _base_dependencies() -> set[str]:
    """The distributions the base install needs (subguard's requirements without extras, transitively)."""
    import re
    from importlib import metadata

    todo, seen = ["subguard"], set()
    while todo:
        name = todo.pop()
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        for req in dist.requires or ():
            if "extra ==" in req or "extra==" in req:
                continue
            dep = re.split(r"[ ;<>=!~\[(]", req, maxsplit=1)[0].lower().replace("_", "-")
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


@pytest.mark.slow
def test_check_org_map_in_a_base_install_without_spark(org: tuple[Path, Path], tmp_path: Path) -> None:
    """A plain venv: this checkout installed without dependencies, the base dependencies (and nothing
    else: no pyspark, pyarrow or py4j) linked in from the running interpreter's site-packages."""
    from importlib import metadata

    root, omap = org
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps", str(ROOT)],
        check=True,
        timeout=900,
        capture_output=True,
    )
    deps = tmp_path / "deps"
    deps.mkdir()
    wanted = _base_dependencies()
    assert wanted and not wanted & {"pyspark", "pyarrow", "py4j"}
    for dist in metadata.distributions():
        if dist.metadata["Name"].lower().replace("_", "-") not in wanted:
            continue
        base = Path(str(dist.locate_file("")))
        for top in {Path(str(f)).parts[0] for f in dist.files or () if not str(f).startswith("..")}:
            if (base / top).exists() and not (deps / top).exists():
                (deps / top).symlink_to(base / top)
    purelib = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "base-deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    probe = subprocess.run([str(py), "-c", "import pyspark"], capture_output=True, text=True)
    assert probe.returncode != 0  # the venv cannot see Spark
    proc = subprocess.run(
        [str(venv / "bin" / "subguard"), "check", ".", "--no-cache", "--org-map", str(omap)],
        cwd=root / "billing",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr
    assert f"orders:orders/consumer.py:{LINE} (org map " in proc.stdout and "SG102" in proc.stdout
