"""Is there a Java the audit's Spark can start? Checked before Spark is loaded, so a missing or old
Java is one line that says what to do, not a PySpark traceback. Standard library only."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping

MIN_MAJOR = 17  # Spark 4 runs on Java 17 and 21
HOW = "install a JDK 17 or newer and point JAVA_HOME at it (or put its bin/ first on PATH)"


def _major(version_text: str) -> int | None:
    """The major version from `java -version` output: 'version "17.0.15"' -> 17, '"1.8.0_392"' -> 8."""
    m = re.search(r'version "(\d+)(?:\.(\d+))?', version_text)
    if m is None:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def problem(env: Mapping[str, str] | None = None) -> str | None:
    """Why the audit cannot start Spark's JVM, as one line; None when a Java 17+ is there. The JVM is
    found as PySpark finds it: `$JAVA_HOME/bin/java` when JAVA_HOME is set, else `java` on PATH."""
    env = os.environ if env is None else env
    home = env.get("JAVA_HOME")
    if home:
        java: str | None = os.path.join(home, "bin", "java")
        where = f"JAVA_HOME={home}"
        if not (java and os.path.isfile(java) and os.access(java, os.X_OK)):
            return f"the audit needs Java {MIN_MAJOR}+ for Spark, but {where} has no bin/java: {HOW}"
    else:
        java = shutil.which("java", path=env.get("PATH"))
        where = "PATH"
        if java is None:
            return f"the audit needs Java {MIN_MAJOR}+ for Spark, and no java was found (JAVA_HOME unset, none on PATH): {HOW}"
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the audit needs Java {MIN_MAJOR}+ for Spark, but {java} ({where}) does not run: {exc}; {HOW}"
    major = _major(done.stderr + done.stdout)
    if major is None or done.returncode != 0:
        return f"the audit needs Java {MIN_MAJOR}+ for Spark, but {java} ({where}) did not say its version: {HOW}"
    if major < MIN_MAJOR:
        return f"the audit needs Java {MIN_MAJOR}+ for Spark, but {java} ({where}) is Java {major}: {HOW}"
    return None
