"""Long fuzz run: the properties of tests/fuzz with many more, random examples (not part of CI).

    python bench/fuzz_long.py [EXAMPLES]      # default 2000 per property

Every failure is printed with hypothesis' minimal example; add a regression test for it in
tests/test_hostile.py or tests/fuzz/ and fix the owning module.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    examples = argv[0] if argv else "2000"
    env = {**os.environ, "SUBGUARD_FUZZ_EXAMPLES": examples, "SUBGUARD_FUZZ_RANDOM": "1"}
    root = Path(__file__).resolve().parent.parent
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore::DeprecationWarning",
        "tests/fuzz",
    ]
    return subprocess.run(cmd, cwd=root, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
