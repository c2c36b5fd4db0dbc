"""`resolve.Symbols` remembers a name it looked up in vain (every file named after it was tried), and
still finds it once a file loaded for another name declares it (a second top-level class)."""

from __future__ import annotations

from subguard.extract.java.facts import JavaFacts, java_facts
from subguard.extract.java.resolve import Symbols

FILES = {
    "src/shop/Main.java": b"package shop; public class Main {} class Helper {}",
    "src/shop/Other.java": b"package shop; public class Other {}",
}


def test_a_remembered_miss_is_found_once_a_file_loaded_since_declares_it() -> None:
    loads: list[str] = []

    def load(path: str) -> JavaFacts | None:
        loads.append(path)
        return java_facts(FILES[path])

    symbols = Symbols({}, FILES, load)
    assert symbols._find("shop.Helper") is None  # no file is named Helper
    assert symbols._find("shop.Helper") is None and loads == []  # the miss, remembered
    assert symbols._find("shop.Main") is not None and loads == ["src/shop/Main.java"]
    found = symbols._find("shop.Helper")  # Main.java, registered since, declares it
    assert found is not None and found.path == "src/shop/Main.java"
    assert symbols._find("shop.Missing") is None and symbols._find("shop.Other") is not None
