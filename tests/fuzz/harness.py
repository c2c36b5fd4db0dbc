"""Shared pieces of the fuzz tests: in-memory scans, the real fixtures as seeds, byte mutations.

Example counts are bounded for CI (`SUBGUARD_FUZZ_EXAMPLES`, default 60 per test); `bench/fuzz_long.py`
runs the same properties much longer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from subguard.core.config import Config
from subguard.core.model import FileStatus
from subguard.extract import load_extractors
from subguard.scan.discover import Candidate
from subguard.scan.extraction import ScanResult, scan_files

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EXAMPLES = int(os.environ.get("SUBGUARD_FUZZ_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    derandomize=os.environ.get("SUBGUARD_FUZZ_RANDOM") is None,  # CI: reproducible; the bench: random
    database=None,
)
# small enough that one pathological input cannot eat the CI budget; large enough for every fixture
CONFIG = Config.model_validate({"max-file-size": 96 * 1024, "parse-timeout": 3.0})
_EXTRACTORS = load_extractors()


def _claimed(path: str) -> bool:
    return any(ex.claims(path) for ex in _EXTRACTORS)


def seed_files(limit: int = 64 * 1024) -> dict[str, bytes]:
    """Every fixture file some extractor claims, up to `limit` bytes, by path relative to fixtures/."""
    out: dict[str, bytes] = {}
    for p in sorted(FIXTURES.rglob("*")):
        if p.is_file() and not p.is_symlink() and p.stat().st_size <= limit:
            rel = p.relative_to(FIXTURES).as_posix()
            if _claimed(rel) and ".subguard_cache" not in rel:
                out[rel] = p.read_bytes()
    return out


SEEDS = seed_files()


def scan_memory(files: Mapping[str, bytes], config: Config = CONFIG) -> ScanResult:
    """Scan in-memory files (nothing is read from disk) with every extractor."""
    candidates = [Candidate(path, f"/nonexistent/{path}", len(data), data=data) for path, data in sorted(files.items())]
    return scan_files("/nonexistent", "fuzz", candidates, (), config)


def assert_accounted(files: Mapping[str, bytes], result: ScanResult) -> None:
    """Every input file has exactly one record, with a reason unless it parsed; counts add up."""
    paths = [r.path for r in result.files]
    assert len(paths) == len(set(paths)), "a file is recorded twice"
    assert set(paths) == set(files), f"unaccounted: {set(files) ^ set(paths)}"
    for rec in result.files:
        if rec.status is not FileStatus.PARSED:
            assert rec.reason, rec
        assert "internal error" not in (rec.reason or ""), rec
    assert sum(result.counts().values()) == len(files)


# ---- mutations ------------------------------------------------------------------------------------

TOKENS = [
    b"\x00",
    b"\xff\xfe",
    b"\xef\xbb\xbf",
    b"\xe9",
    b"\r",
    b"\t",
    b"\\u00ZZ",
    b"\\",
    b"'",
    b'"',
    b'"""',
    b"`",
    b"(" * 300,
    b"[" * 300,
    b"{" * 300,
    b"- " * 200,
    b"not " * 200,
    b"-" * 200,
    b"lambda: " * 100,
    b"&a [*a]",
    b"*a",
    b"&x ",
    b"<<: *x",
    b"!!python/object/apply:os.system ['id']",
    b"!!binary",
    b"!!set",
    b"!!omap",
    b"? ",
    b": ",
    b"---\n",
    b"...\n",
    b"%YAML 1.1\n",
    b"{{ .Values.x }}",
    b"${",
    b"${a:${b:${c}}}",
    b"#{",
    b"}",
    b"\\\n",
    b"=",
    b"\n    ",
    b"\n\t",
    b"2001-13-45",
    b"9" * 5000,
    b"0x",
    b"1e99999",
    b"\\ud800",
    b"\xed\xa0\x80",
    b"rocketmq",
    b"RocketMQ",
    b"PushConsumer(",
    b".subscribe(",
    b"@RocketMQMessageListener(",
    b"consumerGroup = ",
    b"import ",
    b"from rocketmq.client import *\n",
    b"static final String ",
    b"class ",
    b"def ",
    b"async ",
    b"-Drocketmq.client.name=",
    b"volumeMounts:",
    b"emptyDir: {}",
    b"FROM ",
    b"ENV ",
    b"ARG ",
    b"\\\n",
    b"kind: Deployment\n",
    b"apiVersion: v1\n",
    b"spec:\n  template:\n",
    b"env:\n- name: X\n  value: ",
]


@st.composite
def mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """`data` after 1-6 byte-level mutations: flip, insert, delete, duplicate, truncate, token."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "dup", "truncate", "token", "token", "token"]))
        pos = draw(st.integers(0, len(out)))
        if op == "flip" and out:
            i = min(pos, len(out) - 1)
            out[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            out[pos:pos] = draw(st.binary(min_size=1, max_size=16))
        elif op == "delete":
            del out[pos : pos + draw(st.integers(1, 64))]
        elif op == "dup":
            end = min(len(out), pos + draw(st.integers(1, 256)))
            out[pos:pos] = out[pos:end] * draw(st.integers(1, 8))
        elif op == "truncate":
            del out[pos:]
        else:
            out[pos:pos] = draw(st.sampled_from(TOKENS))
    return bytes(out)
