"""`check --fix`, `--diff` and `--unsafe-fixes`: the repairs of findings, as edits of the files that declare them.

`plan` turns findings into fixes (SG103, SG401, SG107), `locate` finds where a value is written
(through the language modules `python`, `java`, `yaml`, `properties`), `apply` checks the edited text
by re-parsing it and writes each file atomically; `run` is what `check` calls.
"""
