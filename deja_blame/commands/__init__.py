"""One module per subcommand; each exports a ``run_*`` function that returns an exit code.

The click layer (``deja_blame.cli``) only parses arguments and calls these.
"""
