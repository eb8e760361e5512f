"""git hooks that keep ``refs/notes/deja`` up to date: install, uninstall, status, run.

``install`` writes a small shell script (``deja_blame/resources/hook-tmpl``,
marked with an ID line so it can tell ours from foreign hooks) for
post-commit and post-rewrite, chaining whatever hook was there; the script
hands the work to ``python -m deja_blame.hooks.run`` in the background, within
a hard time budget, so a commit is never blocked or failed by deja.
"""
