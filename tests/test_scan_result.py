"""A scan result's files an extractor read (parsed or failed), found in one pass and kept on the
result: the counts, SG901 and the inline waivers' sources ask for them, not for all 20,000 records."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections import Counter

from subguard.core.model import FileRecord, FileStatus
from subguard.scan.extraction import ScanResult


def _result(files: tuple[FileRecord, ...]) -> ScanResult:
    return ScanResult(root="/r", repo="r", files=files, consumers=(), deployments=())


FILES = (
    FileRecord(path="a.py", status=FileStatus.SKIPPED, reason="no RocketMQ reference (prefilter)"),
    FileRecord(path="b.py", status=FileStatus.PARSED, extractor="python"),
    FileRecord(path="c.java", status=FileStatus.FAILED, reason="line 3: syntax error", extractor="java"),
    FileRecord(path="d.md", status=FileStatus.SKIPPED, reason="not a file type subguard reads"),
    FileRecord(path="e.py", status=FileStatus.PARSED, extractor="python"),
    FileRecord.model_construct(path="f.py", status="skipped", reason="x"),  # a status given as text
)


def test_read_files_are_the_parsed_and_failed_in_order() -> None:
    result = _result(FILES)
    assert [r.path for r in result.read_files()] == ["b.py", "c.java", "e.py"]
    assert result.read_files() is result.read_files()  # one pass, kept


def test_counts_equal_a_tally_of_every_file() -> None:
    for files in (FILES, (), FILES[:1], FILES[1:3]):
        tally = Counter(FileStatus(r.status) for r in files)
        assert _result(files).counts() == {s.value: tally[s] for s in FileStatus}


def test_what_is_kept_is_neither_pickled_nor_copied_to_other_files() -> None:
    result = _result(FILES)
    result.read_files()
    again = pickle.loads(pickle.dumps(result))
    assert again == result and "_read_files" not in again.__dict__
    assert [r.path for r in again.read_files()] == ["b.py", "c.java", "e.py"]
    fewer = dataclasses.replace(result, files=FILES[:2])
    assert [r.path for r in fewer.read_files()] == ["b.py"]
    assert copy.deepcopy(result).read_files() == result.read_files()
