"""Command-line entry point: a click group whose subcommands live in their own modules, loaded lazily."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Any

import click

from subguard import __version__
from subguard.cli.streams import escape_streams

# subcommand -> "module:attribute" (an explicit registry; modules import only when the command runs)
COMMANDS: dict[str, str] = {
    "inventory": "subguard.cli.commands.inventory:inventory",
    "check": "subguard.cli.commands.check:check",
    "audit": "subguard.cli.commands.audit:audit",
    "rules": "subguard.cli.commands.rules:rules",
    "explain": "subguard.cli.commands.explain:explain",
    "evidence": "subguard.cli.commands.evidence:evidence",
    "simulate": "subguard.cli.commands.simulate:simulate",
    "serve": "subguard.cli.commands.serve:serve",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, _, attr = target.partition(":")
        cmd = getattr(importlib.import_module(module), attr)
        assert isinstance(cmd, click.Command)
        return cmd


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="subguard")
def cli() -> None:
    """subguard: lint RocketMQ consumer subscriptions before they reach production."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (0 clean, 1 findings, 2 usage or internal error)."""
    escape_streams()
    try:
        result: Any = cli.main(
            args=list(argv) if argv is not None else None, prog_name="subguard", standalone_mode=False
        )
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 2
    except click.ClickException as exc:
        exc.show()
        return 2
    except click.exceptions.Exit as exc:
        return int(exc.exit_code or 0)
    except BrokenPipeError:
        return 0
    return int(result or 0)


def main_entry() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    main_entry()
