"""One module per CLI subcommand; `subguard.cli.COMMANDS` lists them."""
