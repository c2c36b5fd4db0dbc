"""The Python worker daemon of a local audit (`spark.python.daemon.module`): pyspark's own
`pyspark.daemon`, which forks one worker per Python task slot, with what every audit task imports
loaded once before it forks (`zygote.preload`: pyspark's worker, the audit's task modules and the
extractors: libcst, tree-sitter, ruamel). Each forked worker starts with them in place (copy-on-write) instead of
importing them itself, which cost every worker about a second of CPU at the audit's first job.

Where the audit started a zygote beside the JVM (`subguard.audit.zygote`), this process hands its
streams over to it, which has all that imported already, instead of importing it now.

Local masters only (`driver.session`): on a cluster the executors' Python may not see this module
before the job's `--py-files` are in place. Nothing here starts a thread (the daemon forks), and a
module that fails to import is left to the workers, as without this daemon.
"""

from __future__ import annotations

if __name__ == "__main__":  # pragma: no cover - started by Spark as `python -m subguard.audit.daemon`
    from subguard.audit import zygote

    if not zygote.hand_over():  # no zygote started beside the JVM (or it refused): be the daemon
        import pyspark.daemon

        zygote.preload()
        pyspark.daemon.manager()
