"""Claude Code hook handlers, one module per event; `commands.hook` dispatches to them."""
