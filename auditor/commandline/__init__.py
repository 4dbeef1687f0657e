"""The command line's grammar: each subcommand with its own options (per-command `--help`), and the one parser
that reads them all."""
