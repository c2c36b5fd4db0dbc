"""The console entry runs pydantic without its plugin lookup (`subguard.cli.pydantic_plugins`); a
library user's `import subguard` keeps pydantic as it was."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CONSUMER = """from rocketmq.client import PushConsumer

c = PushConsumer("GID_PLUGINS")
c.subscribe("TopicPlugins", print, "TagA")
"""


def _python(code: str, cwd: Path | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True, cwd=cwd, env=os.environ
    )
    return proc.stdout.strip()


def test_a_console_check_never_imports_the_plugin_lookup(tmp_path: Path) -> None:
    (tmp_path / "consumer.py").write_text(CONSUMER)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "subguard", "check", ".", "--no-cache", "--format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert '"findings"' in proc.stdout  # pydantic's models were built and used
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "pydantic._internal._model_construction" in imported
    assert "importlib.metadata" not in imported and "zipfile" not in imported


def test_the_stand_in_answers_no_plugins_and_hands_over_anything_else() -> None:
    out = _python(
        "import sys\n"
        "from subguard.cli import pydantic_plugins\n"
        "pydantic_plugins.skip_lookup()\n"
        "from subguard.core.model import Location\n"
        "Location(path='a.py', line=1)\n"
        "from pydantic.plugin._loader import get_plugins\n"
        "print(list(get_plugins()), 'importlib.metadata' in sys.modules)\n"
        "import pydantic.plugin._loader as stand_in\n"
        "print(stand_in.PYDANTIC_ENTRY_POINT_GROUP, type(sys.modules[pydantic_plugins.LOADER]).__name__)\n"
    )
    # no lookup while only `get_plugins` is asked for; any other name loads the real module in its place
    assert out.splitlines() == ["[] False", "pydantic module"]


def test_a_library_import_keeps_pydantics_lookup() -> None:
    out = _python(
        "import sys\n"
        "import subguard.cli.entry\n"
        "from subguard.core.model import Location\n"
        "Location(path='a.py', line=1)\n"
        "print('importlib.metadata' in sys.modules, type(sys.modules['pydantic.plugin._loader']).__name__)\n"
    )
    assert out == "True module"


def test_skip_lookup_leaves_a_loaded_loader_alone() -> None:
    out = _python(
        "import sys\n"
        "import pydantic.plugin._loader as real\n"
        "from subguard.cli import pydantic_plugins\n"
        "pydantic_plugins.skip_lookup()\n"
        "print(sys.modules[pydantic_plugins.LOADER] is real)\n"
    )
    assert out == "True"
