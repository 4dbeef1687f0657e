"""The command line: `rocm-audit` and its subcommands."""
