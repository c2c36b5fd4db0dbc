"""One module per CLI subcommand; `subguard.cli.main.COMMANDS` lists them."""
