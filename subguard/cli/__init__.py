"""The command line: console entry (`cli.entry`), the click group (`cli.main`) and one module per command.

Kept empty: the console entry replays the run memo before anything heavy is imported."""
