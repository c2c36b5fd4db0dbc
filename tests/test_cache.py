"""The content cache as `subguard check` uses it: reuse, invalidation, and a cache that cannot be trusted."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

from subguard.cli.main import main
from subguard.core.cache import MemoFile, read_signed, write_signed
from subguard.core.signing import MAGIC as _MAGIC
from tests.report_json import all_findings

# one consumer module; "{tags}" is its tag expression (shared by the cache, action and hook tests)
CONSUMER = (Path(__file__).parent / "fixtures" / "snippets" / "order_consumer.py.tmpl").read_text(encoding="utf-8")

EXTRA_POLICY = """id: ACME001
name: any-consumer
severity: note
scope: consumer
message: "consumer of group {group}"
docs:
  summary: Every consumer (a test policy).
  what: Reports every consumer.
"""


class Planted:
    """Unpickling this creates a marker file: proof that a cache file was unpickled."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (self.marker, "w"))


@pytest.fixture(autouse=True)
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private user cache directory (HMAC key, parsed policies, impacts) per test."""
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    monkeypatch.delenv("SUBGUARD_CACHE_DIR", raising=False)  # these tests use the default <root>/.subguard_cache
    return xdg / "subguard"


def make_repo(root: Path, billing: str = "tag1", shipping: str = "tag2") -> Path:
    for name, tags in (("billing", billing), ("shipping", shipping)):
        (root / name).mkdir(parents=True, exist_ok=True)
        (root / name / "consumer.py").write_text(CONSUMER.format(tags=tags), encoding="utf-8")
    (root / "README.md").write_text("docs\n", encoding="utf-8")
    return root


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, object]], str]:
    code = main(["check", *args, "--format", "json", "--fail-on", "none", "--no-simulate"])
    out, err = capsys.readouterr()
    return code, all_findings(out), err


def rules(findings: list[dict[str, object]]) -> list[object]:
    return sorted(f["rule"] for f in findings)


def rewrite_same_stat(path: Path, text: str) -> None:
    """Change a file's content but keep its size and mtime: only the cache can still see the old one."""
    st = path.stat()
    assert len(text.encode()) == st.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_warm_run_gives_identical_findings_and_uses_the_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    code, cold, err = check(capsys, str(repo))
    assert code == 0 and "SG102" in rules(cold) and "warning" not in err
    cache_dir = repo / ".subguard_cache"
    assert (cache_dir / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    # the whole result is written by the second run over the same files (an edit loop never reads it)
    assert not list(cache_dir.glob("result-*.pickle")) and len(list(cache_dir.glob("scan-*.pickle"))) == 1

    _, warm, err = check(capsys, str(repo))
    assert warm == cold and err.count("warning") == 0
    assert len(list(cache_dir.glob("result-*.pickle"))) == 1

    # same size and mtime, new content: the warm run still answers from the cache (so it was used) ...
    rewrite_same_stat(repo / "shipping" / "consumer.py", CONSUMER.format(tags="tag1"))
    _, stale, _ = check(capsys, str(repo))
    assert stale == cold
    # ... and --no-cache reads the files again
    _, fresh, _ = check(capsys, str(repo), "--no-cache")
    assert "SG102" not in rules(fresh)


def test_touching_a_file_re_extracts_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo")
    _, before, _ = check(capsys, str(repo))
    assert "SG102" in rules(before)
    target = repo / "shipping" / "consumer.py"
    st = target.stat()
    target.write_text(CONSUMER.format(tags="tag1"), encoding="utf-8")
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    _, after, _ = check(capsys, str(repo))
    assert "SG102" not in rules(after)
    _, uncached, _ = check(capsys, str(repo), "--no-cache")
    assert after == uncached


def test_a_changed_policy_set_invalidates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo")
    _, before, _ = check(capsys, str(repo))
    rewrite_same_stat(repo / "shipping" / "consumer.py", CONSUMER.format(tags="tag1"))
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "ACME001-any-consumer.yaml").write_text(EXTRA_POLICY, encoding="utf-8")
    _, after, _ = check(capsys, str(repo), "--policies", str(policies))
    assert "SG102" in rules(before) and "SG102" not in rules(after)  # re-extracted despite the same stat
    assert rules(after).count("ACME001") == 2
    assert len(list((repo / ".subguard_cache").glob("scan-*.pickle"))) == 2

    # editing a policy file (same directory, new bytes) is a new policy set too
    rewrite_same_stat(repo / "shipping" / "consumer.py", CONSUMER.format(tags="tag3"))
    (policies / "ACME001-any-consumer.yaml").write_text(EXTRA_POLICY.replace("note", "error"), encoding="utf-8")
    _, edited, _ = check(capsys, str(repo), "--policies", str(policies))
    assert "SG102" in rules(edited)
    assert {f["severity"] for f in edited if f["rule"] == "ACME001"} == {"error"}


def test_corrupt_cache_warns_and_gives_the_correct_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo")
    check(capsys, str(repo))
    for f in (repo / ".subguard_cache").glob("*.pickle"):
        f.write_bytes(f.read_bytes()[: len(_MAGIC) + 40] + b"garbage")
    rewrite_same_stat(repo / "shipping" / "consumer.py", CONSUMER.format(tags="tag1"))
    code, again, err = check(capsys, str(repo))
    assert code == 0
    assert "warning: cache ignored" in err and "corrupt" in err
    assert "SG102" not in rules(again)  # the files were read again, not the broken cache
    _, clean, err = check(capsys, str(repo))
    assert clean == again and "warning" not in err  # the cache was rewritten


def test_unwritable_cache_dir_warns_and_still_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo")
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, so no directory can be made below it\n", encoding="utf-8")
    config = repo / ".subguard.yaml"
    config.write_text(f"cache-dir: {blocker / 'cache'}\n", encoding="utf-8")
    code, findings, err = check(capsys, str(repo), "--config", str(config))
    assert code == 0 and "SG102" in rules(findings)
    assert "warning: cache not written" in err
    assert not (repo / ".subguard_cache").exists()


def test_cache_dir_from_config_inside_the_repo_is_not_scanned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    config = repo / ".subguard.yaml"
    config.write_text("cache-dir: build-cache/sg\n", encoding="utf-8")
    _, first, _ = check(capsys, str(repo), "--config", str(config))
    assert list((repo / "build-cache" / "sg").glob("scan-*.pickle"))
    rewrite_same_stat(repo / "shipping" / "consumer.py", CONSUMER.format(tags="tag1"))
    _, second, _ = check(capsys, str(repo), "--config", str(config))
    assert second == first  # a whole-repo hit: the cache's own files did not change the manifest


def test_planted_cache_file_is_never_unpickled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], user_cache: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    _, first, _ = check(capsys, str(repo))
    check(capsys, str(repo))  # the second run over the same files writes the whole result
    marker = tmp_path / "unpickled"
    payload = pickle.dumps(Planted(str(marker)))
    planted = list((repo / ".subguard_cache").glob("*.pickle")) + list((user_cache / "policies").glob("*.pickle"))
    assert len(planted) == 3
    for f in planted:  # the right magic, a signature made with someone else's key
        f.write_bytes(_MAGIC + os.urandom(32) + payload)
    code, again, err = check(capsys, str(repo))
    assert not marker.exists()
    assert code == 0 and again == first
    assert "was not written by this user" in err


def test_signed_helpers_and_memo_file(tmp_path: Path, user_cache: Path) -> None:
    target = tmp_path / "x.pickle"
    write_signed(target, {"a": 1})
    assert read_signed(target) == {"a": 1}
    blob = bytearray(target.read_bytes())
    blob[-1] ^= 1
    target.write_bytes(bytes(blob))
    assert read_signed(target) is None
    assert read_signed(tmp_path / "missing.pickle") is None

    memo = MemoFile("unit", limit=2)
    for key in ("k1", "k2", "k3"):
        memo.put(key, key.upper())
    memo.save()
    again = MemoFile("unit", limit=2)
    assert "k1" not in again and again.get("k3") == "K3" and again.get("k2") == "K2"


def test_inventory_uses_the_cache_and_no_cache_bypasses_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo")
    assert main(["inventory", str(repo), "--format", "json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert sorted(r["expression"] for r in first) == ["tag1", "tag2"]
    rewrite_same_stat(repo / "shipping" / "consumer.py", CONSUMER.format(tags="tag1"))
    assert main(["inventory", str(repo), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == first
    assert main(["inventory", str(repo), "--format", "json", "--no-cache"]) == 0
    assert sorted(r["expression"] for r in json.loads(capsys.readouterr().out)) == ["tag1", "tag1"]


def test_simulated_impact_is_memoised_and_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], user_cache: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    args = ["check", str(repo), "--format", "json", "--fail-on", "none"]
    assert main(args) == 0
    cold = all_findings(capsys.readouterr().out)
    impacts = {f["rule"]: f.get("impact") for f in cold if f["rule"] == "SG102"}
    assert impacts["SG102"], cold  # tag1 vs tag2 in one group: the simulator predicts loss
    assert len(list(user_cache.glob("impact-*.pickle"))) == 1
    assert main(args) == 0
    assert all_findings(capsys.readouterr().out) == cold
    assert main([*args, "--no-cache"]) == 0
    assert all_findings(capsys.readouterr().out) == cold


def test_cache_dir_from_the_environment_holds_one_set_per_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared-cache"
    monkeypatch.setenv("SUBGUARD_CACHE_DIR", str(shared))
    one, two = make_repo(tmp_path / "one"), make_repo(tmp_path / "two", shipping="tag1")
    _, first_one, _ = check(capsys, str(one))
    _, first_two, _ = check(capsys, str(two))
    assert not (one / ".subguard_cache").exists() and not (two / ".subguard_cache").exists()
    assert len(list(shared.glob("scan-*.pickle"))) == 2
    assert "SG102" in rules(first_one) and "SG102" not in rules(first_two)
    rewrite_same_stat(one / "shipping" / "consumer.py", CONSUMER.format(tags="tag1"))
    _, again_one, _ = check(capsys, str(one))
    assert again_one == first_one  # still answered from its own entry, not overwritten by the other root


def test_cache_of_an_older_release_is_a_silent_miss(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """After an upgrade the old cache files are simply rebuilt: no warning about tampering."""
    repo = make_repo(tmp_path / "repo")
    _, first, _ = check(capsys, str(repo))
    for f in (repo / ".subguard_cache").glob("*.pickle"):
        f.write_bytes(b"subguard-cache-v1\n" + os.urandom(32) + f.read_bytes()[len(_MAGIC) + 32 :])
    code, again, err = check(capsys, str(repo))
    assert code == 0 and again == first and "warning" not in err


def test_a_files_digest_is_computed_once_per_bytes_object(
    tmp_path: Path, user_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parse memo, its prefetch and the cached-parse check share one sha1 per file's bytes."""
    import hashlib

    from subguard.core import cache as cache_module
    from subguard.core.cache import ContentCache

    computed: list[bytes] = []
    real = hashlib.sha1

    class Counting:
        @staticmethod
        def sha1(data: bytes) -> hashlib._Hash:
            computed.append(data)
            return real(data)

    monkeypatch.setattr(cache_module, "hashlib", Counting)
    cache = ContentCache(tmp_path, "ns", lambda _msg: None)
    data = b"class A {}" * 10
    assert not cache.has_parse("java", "A.java", data)
    assert cache.memo("java", "A.java", data, lambda: 1) == 1
    assert cache.has_parse("java", "A.java", data)
    assert cache.digest(data) == real(data).hexdigest()
    assert computed == [data]  # once, for three lookups
    equal = bytes(bytearray(data))  # another object, the same bytes: the same digest, computed anew
    assert equal is not data and cache.digest(equal) == cache.digest(data)
    assert len(computed) == 2
    with cache.digests_held():
        assert cache.digest(data) == real(data).hexdigest()  # held from before: not computed again
        assert cache.digest(b"other") == real(b"other").hexdigest()
    assert len(computed) == 3
    assert cache.memo("java", "A.java", data, lambda: 2) == 1  # let go at the end: computed anew, still cached
    assert len(computed) == 4


def test_a_scan_hashes_each_files_bytes_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An extractor's files are hashed once per run: the cached-parse check, the prefetch, the parse
    memo and the digests its kept linking work is checked against share the sha1 (`RepoContext.sha1`)."""
    import hashlib

    from subguard.core import cache as cache_module
    from subguard.core.config import Config
    from subguard.scan.extraction import scan_repo

    root = tmp_path / "repo"
    java = root / "src/main/java/com/acme"
    java.mkdir(parents=True)
    for i in range(3):
        (java / f"L{i}.java").write_text(
            "package com.acme;\nimport org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;\n"
            f"class L{i} {{ void go() throws Exception {{\n"
            f'  DefaultMQPushConsumer c = new DefaultMQPushConsumer("g{i}");\n'
            f'  c.subscribe("T", "a"); c.start(); }} }}\n',
            encoding="utf-8",
        )
    (root / "consumer.py").write_text(CONSUMER.replace("{tags}", "a"), encoding="utf-8")
    hashed: list[bytes] = []
    real = hashlib.sha1

    def sha1(data: bytes) -> hashlib._Hash:
        hashed.append(data)
        return real(data)

    monkeypatch.setattr(cache_module.hashlib, "sha1", sha1)  # the content cache's: every file's digest

    def files() -> list[bytes]:
        contents = {p.read_bytes() for p in root.rglob("*") if p.is_file() and ".subguard_cache" not in p.parts}
        return [data for data in hashed if data in contents]

    first = scan_repo(root, Config(), cache_key="k")
    assert len(first.consumers) == 4
    assert len(files()) == len(set(files())) == 4  # each file's bytes once, by every user of the digest
    (java / "L0.java").write_text((java / "L0.java").read_text(encoding="utf-8") + "\n", encoding="utf-8")
    hashed.clear()
    assert scan_repo(root, Config(), cache_key="k").consumers == first.consumers
    assert len(files()) == len(set(files())) == 3  # the Java extractor runs again over its three files
