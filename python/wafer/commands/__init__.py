"""The CLI's subcommands beyond replay and compare, a module per family; `wafer.cli` adds them."""
