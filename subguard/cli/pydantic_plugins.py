"""pydantic without its plugin lookup, in a process subguard's command line owns.

pydantic looks its plugins up when it builds its first model: `pydantic.plugin._loader` imports
`importlib.metadata` (and with it zipfile, shutil, email, socket and csv) and reads the entry points
of every installed distribution. Measured on this project's virtual environment, that is 50-90 ms of
every `subguard` start, a tenth of what a `check` after an edit spends importing. pydantic's
documented switch, `PYDANTIC_DISABLE_PLUGINS=__all__`, returns no plugins but still imports
`importlib.metadata` first.

subguard's models are its own records and config; a pydantic plugin (an observability hook) has
nothing of the user's to observe in them, so a process started by `subguard` runs without plugins,
as with that switch. `skip_lookup` puts a stand-in for the loader module in `sys.modules` before
pydantic asks for it: its `get_plugins` returns none, and any other name is read from the real
module, imported then (a pydantic whose plugin code asks for more than `get_plugins` gets what it
asks for). A library user's `import subguard` never installs it.
"""

from __future__ import annotations

import importlib
import sys
import types

LOADER = "pydantic.plugin._loader"


class _NoPlugins(types.ModuleType):
    """The stand-in: `get_plugins()` is empty; every other attribute is the real loader's."""

    @staticmethod
    def get_plugins() -> tuple[()]:
        return ()

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):  # what the import system asks of any module (`__path__`, `__spec__`)
            raise AttributeError(name)
        if sys.modules.get(LOADER) is self:
            del sys.modules[LOADER]
        return getattr(importlib.import_module(LOADER), name)


def skip_lookup() -> None:
    """Install the stand-in, unless pydantic has loaded its plugin loader already."""
    if LOADER not in sys.modules:
        sys.modules[LOADER] = _NoPlugins(LOADER, __doc__)
