"""One module per command; `cli` imports only the one being run (the hook path stays light)."""
