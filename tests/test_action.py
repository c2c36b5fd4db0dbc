"""The composite action (`action.yml`): its `run:` steps executed in bash as the runner would, with a
simulated GitHub environment, plus the two validators GitHub users rely on (schema and zizmor).

The scripts are read out of action.yml; expressions (`${{ ... }}`) in `env:` and `if:` are evaluated
here the way the runner does for the few forms the action uses, and an unsupported form fails the test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

REPO = Path(__file__).resolve().parents[1]
ACTION = REPO / "action.yml"
BIN = Path(sys.executable).parent

# one consumer module; "{tags}" is its tag expression (shared by the cache, action and hook tests)
CONSUMER = (Path(__file__).parent / "fixtures" / "snippets" / "order_consumer.py.tmpl").read_text(encoding="utf-8")

_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_TERM = re.compile(r"^(inputs\.[\w-]+|steps\.[\w-]+\.outputs\.[\w-]+)\s*(==|!=)\s*'([^']*)'$")


def load_action() -> dict[str, Any]:
    data = YAML(typ="safe", pure=True).load(ACTION.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@dataclass
class Run:
    """One simulated invocation of the action."""

    workspace: Path
    inputs: dict[str, str]
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)  # step id -> outputs
    results: list[tuple[str, int | None, str, str]] = field(
        default_factory=list
    )  # name, exit (None: skipped), stdout, stderr

    def value(self, ref: str) -> str:
        if ref.startswith("inputs."):
            return self.inputs[ref.removeprefix("inputs.")]
        _, step, _, name = ref.split(".", 3)
        return self.outputs.get(step, {}).get(name, "")

    def substitute(self, text: str) -> str:
        def one(m: re.Match[str]) -> str:
            ref = m.group(1)
            assert re.fullmatch(r"inputs\.[\w-]+|steps\.[\w-]+\.outputs\.[\w-]+", ref), (
                f"unsupported expression {ref!r}"
            )
            return self.value(ref)

        return _EXPR.sub(one, text)

    def condition(self, expr: str | None) -> bool:
        """`if:` as the runner evaluates it, for `always()`, `&&` and `x == 'literal'` / `!=`."""
        if expr is None:
            return True
        m = _EXPR.fullmatch(expr.strip())
        body = m.group(1) if m else expr.strip()
        ok = True
        for term in (t.strip() for t in body.split("&&")):
            if term == "always()":
                continue
            t = _TERM.match(term)
            assert t, f"unsupported condition term {term!r}"
            ref, op, literal = t.groups()
            ok = ok and ((self.value(ref) == literal) == (op == "=="))
        return ok


def inputs_with_defaults(overrides: dict[str, str]) -> dict[str, str]:
    declared = load_action()["inputs"]
    unknown = set(overrides) - set(declared)
    assert not unknown, f"not inputs of the action: {unknown}"
    return {name: str(overrides.get(name, spec.get("default", ""))) for name, spec in declared.items()}


def run_action(
    workspace: Path,
    tmp: Path,
    skip: tuple[str, ...] = ("Install subguard",),
    env: dict[str, str] | None = None,
    **overrides: str,
) -> Run:
    """Run every `run:` step in order (a `uses:` step only has its `if:` evaluated); `env`: more of
    the runner's environment (GITHUB_EVENT_PATH, ...)."""
    run = Run(workspace, inputs_with_defaults({k.replace("_", "-"): v for k, v in overrides.items()}))
    summary, output = tmp / "step_summary.md", tmp / "github_output"
    summary.write_text("", encoding="utf-8")
    base_env = {
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": os.environ.get("HOME", str(tmp)),
        "XDG_CACHE_HOME": str(tmp / "xdg"),
        "GITHUB_ACTION_PATH": str(REPO),
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary),
        "NO_COLOR": "1",
        **(env or {}),
    }
    for i, step in enumerate(load_action()["runs"]["steps"]):
        name = step.get("name", f"step {i}")
        if not run.condition(step.get("if")) or "run" not in step or name in skip:
            run.results.append((name, None, "", ""))
            continue
        assert step.get("shell") == "bash"
        output.write_text("", encoding="utf-8")
        env = {**base_env, "GITHUB_OUTPUT": str(output)}
        env.update({k: run.substitute(str(v)) for k, v in (step.get("env") or {}).items()})
        script = tmp / f"step{i}.sh"
        script.write_text(step["run"], encoding="utf-8")
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        run.results.append((name, proc.returncode, proc.stdout, proc.stderr))
        if "id" in step:
            run.outputs[step["id"]] = dict(
                line.split("=", 1) for line in output.read_text(encoding="utf-8").splitlines() if "=" in line
            )
        if proc.returncode != 0:
            break  # the runner stops at a failed step (later steps here have no always())
    return run


def result(run: Run, name: str) -> tuple[int | None, str, str]:
    for step, code, out, err in run.results:
        if step == name:
            return code, out, err
    raise AssertionError(f"step {name!r} did not run or was not reached: {run.results}")


def workspace(tmp_path: Path, shipping_tags: str) -> Path:
    ws = tmp_path / "ws"
    for name, tags in (("billing", "tag1"), ("shipping", shipping_tags)):
        (ws / name).mkdir(parents=True)
        (ws / name / "consumer.py").write_text(CONSUMER.format(tags=tags), encoding="utf-8")
    return ws


def test_run_scripts_take_inputs_only_from_the_environment() -> None:
    for step in load_action()["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], f"step {step.get('name')!r} interpolates an expression into its script"
    script = (REPO / "scripts" / "action-check.sh").read_text(encoding="utf-8")
    assert "${{" not in script and "eval " not in script


def test_every_action_output_is_written_by_the_check_step(tmp_path: Path) -> None:
    run = run_action(workspace(tmp_path, "tag1"), tmp_path)
    for name, spec in load_action()["outputs"].items():
        m = _EXPR.fullmatch(spec["value"])
        assert m and m.group(1).startswith("steps.check.outputs."), name
        assert m.group(1).rsplit(".", 1)[1] in run.outputs["check"], name


def test_failing_workspace(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "tag2")
    run = run_action(ws, tmp_path, inventory_file="inventory.jsonl")
    code, out, err = result(run, "Check subscriptions")
    assert code == 0, err  # findings fail in the last step, after the SARIF upload
    assert re.search(r"^::error file=billing/consumer\.py,line=\d+", out, re.MULTILINE), out
    assert "SG102" in out and "shipping/consumer.py" in out
    outputs = run.outputs["check"]
    assert int(outputs["errors"]) >= 1 and outputs["exit-code"] == "1"
    assert outputs["sarif-file"] == "subguard.sarif"
    sarif = json.loads((ws / "subguard.sarif").read_text(encoding="utf-8"))
    assert sarif["version"] == "2.1.0"
    assert any(r["ruleId"] == "SG102" for r in sarif["runs"][0]["results"])
    assert outputs["inventory-file"] == "inventory.jsonl"
    rows = [json.loads(line) for line in (ws / "inventory.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(r["expression"] for r in rows) == ["tag1", "tag2"]
    summary = (tmp_path / "step_summary.md").read_text(encoding="utf-8")
    assert "SG102" in summary and "order-group" in summary
    assert run.condition(next(s for s in load_action()["runs"]["steps"] if s.get("name") == "Upload SARIF")["if"])
    code, _, err = result(run, "Fail on findings")
    assert code == 1 and "exit 1" in err


def test_clean_workspace(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "tag1")
    run = run_action(ws, tmp_path, upload_sarif="false")
    code, out, err = result(run, "Check subscriptions")
    assert code == 0, err
    assert "::error" not in out
    outputs = run.outputs["check"]
    assert (outputs["errors"], outputs["exit-code"], outputs["inventory-file"]) == ("0", "0", "")
    assert outputs["sarif-file"] == "subguard.sarif" and (ws / "subguard.sarif").is_file()
    steps = {name: code for name, code, _, _ in run.results}
    assert steps["Fail on findings"] is None and steps["Upload SARIF"] is None  # both skipped by their `if:`


def test_fail_on_warning_counts_warnings(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "tag1")
    # same tag set, different order: SG103 is a warning; it only fails the run with fail-on: warning
    (ws / "billing" / "consumer.py").write_text(CONSUMER.format(tags="tag1 || tag2"), encoding="utf-8")
    (ws / "shipping" / "consumer.py").write_text(CONSUMER.format(tags="tag2 || tag1"), encoding="utf-8")
    lenient = run_action(ws, tmp_path)
    assert lenient.outputs["check"]["exit-code"] == "0" and int(lenient.outputs["check"]["warnings"]) >= 1
    strict = run_action(ws, tmp_path, fail_on="warning")
    assert strict.outputs["check"]["exit-code"] == "1"
    assert result(strict, "Fail on findings")[0] == 1


@pytest.mark.parametrize(
    "hostile",
    ["$(touch {m})", "`touch {m}`", "; touch {m}", "billing $(touch {m}) shipping", "billing\ntouch {m}"],
)
def test_hostile_paths_input_is_never_executed(tmp_path: Path, hostile: str) -> None:
    ws = workspace(tmp_path, "tag2")
    marker = tmp_path / "pwned"
    run = run_action(
        ws,
        tmp_path,
        paths=hostile.format(m=marker),
        sarif_file=f"$(touch {marker}).sarif",
        policies=f"$(touch {marker})",
        config="",
    )
    assert not marker.exists()
    code, _, err = result(run, "Check subscriptions")
    assert code == 2 and "does not exist" in err  # the words are taken as paths (or policy dirs) and fail as such
    assert run.outputs["check"]["exit-code"] == "2"


def test_paths_split_on_spaces_and_newlines(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "tag2")
    run = run_action(ws, tmp_path, paths="billing\n  shipping\n")
    assert run.outputs["check"]["exit-code"] == "1"  # both members seen: the group disagreement is found
    only_billing = run_action(ws, tmp_path, paths="billing")
    assert only_billing.outputs["check"]["exit-code"] == "0"


def test_hostile_sarif_name_is_a_literal_file_name(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "tag1")
    marker = tmp_path / "pwned"
    name = f"$(touch {marker})x.sarif".replace("/", "_")
    run = run_action(ws, tmp_path, sarif_file=name)
    assert not marker.exists()
    assert run.outputs["check"]["sarif-file"] == name and (ws / name).is_file()


@pytest.mark.parametrize(
    "target",
    [
        "action.yml",
        "examples/github/subguard.yml",
        "examples/github/org-audit.yml",
        "examples/github/subguard-org-map.yml",
    ],
)
def test_validators_report_nothing(target: str) -> None:
    schema = "vendor.github-actions" if target == "action.yml" else "vendor.github-workflows"
    tools = {name: shutil.which(name, path=str(BIN)) or shutil.which(name) for name in ("check-jsonschema", "zizmor")}
    missing = [n for n, p in tools.items() if p is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    checked = subprocess.run(
        [str(tools["check-jsonschema"]), "--builtin-schema", schema, target],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    audited = subprocess.run(
        [str(tools["zizmor"]), "--offline", "--no-progress", "--format", "json", target],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert json.loads(audited.stdout) == []


@pytest.mark.slow
def test_install_step_installs_subguard(tmp_path: Path) -> None:
    """The install step itself, into a fresh virtualenv (downloads dependencies from PyPI)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    step = next(s for s in load_action()["runs"]["steps"] if s.get("name") == "Install subguard")
    env = {
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "GITHUB_ACTION_PATH": str(REPO),
        "HOME": os.environ.get("HOME", str(tmp_path)),
    }
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    version = subprocess.run(
        [str(venv / "bin" / "subguard"), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert version.returncode == 0 and "subguard" in version.stdout


def test_base_defaults_to_the_pull_requests_base_commit(tmp_path: Path) -> None:
    """A fake pull_request event names the base commit; the action passes it as --base: a tag added
    to a consumer run by a RollingUpdate Deployment is SG601, in the annotations, SARIF and summary."""
    from tests.test_check_base import consumer, deployment, git, make_repo, write

    ws = tmp_path / "ws"
    base_sha = make_repo(
        ws,
        {
            "orders/pyproject.toml": "[project]\nname = 'orders'\n",
            "orders/consumer.py": consumer(),
            "orders/k8s/workload.yaml": deployment(),
        },
    )
    write(ws, {"orders/consumer.py": consumer(tags="created||paid||refunded")})
    git(ws, "commit", "-qam", "add refunded")
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps({"pull_request": {"base": {"sha": base_sha}, "head": {"sha": "0" * 40}}}), encoding="utf-8"
    )
    run = run_action(ws, tmp_path, env={"GITHUB_EVENT_PATH": str(event)}, fail_on="warning")
    code, out, err = result(run, "Check subscriptions")
    assert code == 0, err
    assert re.search(r"^::warning file=orders/consumer\.py,line=9,.*title=SG601 ", out, re.MULTILINE), out
    assert f"base: {base_sha} ({base_sha[:12]})" not in out and f"base: {base_sha[:12]}" in out.replace("%3A", ":")
    assert run.outputs["check"]["exit-code"] == "1" and run.outputs["check"]["warnings"] == "1"
    sarif = json.loads((ws / "subguard.sarif").read_text(encoding="utf-8"))
    assert sarif["runs"][0]["properties"]["base"]["commit"] == base_sha
    summary = (tmp_path / "step_summary.md").read_text(encoding="utf-8")
    assert "SG601" in summary and f"judged against base `{base_sha[:12]}`" in summary
    off = run_action(ws, tmp_path, env={"GITHUB_EVENT_PATH": str(event)}, base="none")
    assert "SG601" not in result(off, "Check subscriptions")[1]


def test_base_missing_from_a_shallow_clone_says_fetch_depth_0(tmp_path: Path) -> None:
    from tests.test_check_base import consumer, git, make_repo, write

    origin = tmp_path / "origin"
    base_sha = make_repo(origin, {"consumer.py": consumer()})
    write(origin, {"consumer.py": consumer(tags="created")})
    git(origin, "commit", "-qam", "second")
    ws = tmp_path / "ws"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{origin}", str(ws)], check=True, capture_output=True)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"base": {"sha": base_sha}}}), encoding="utf-8")
    run = run_action(ws, tmp_path, env={"GITHUB_EVENT_PATH": str(event)})
    code, out, err = result(run, "Check subscriptions")
    assert code == 2 and run.outputs["check"]["exit-code"] == "2"
    assert "shallow clone" in err and "fetch-depth: 0" in err and "Traceback" not in err
