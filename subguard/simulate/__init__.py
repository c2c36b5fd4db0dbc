"""Event-driven broker + client simulator: what an inconsistent group does to real messages.

`scenario` loads YAML scenarios, `declared` builds one from scanned consumers, `engine` runs one
deterministic simulation, `runs` repeats it (Monte Carlo) and aggregates, `impact` answers per group.
"""
