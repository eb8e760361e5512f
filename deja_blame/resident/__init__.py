"""The resident server: deja loaded once, each command run in a fork of it.

A ``deja`` command spends most of a warm answer, and a third of a cold one, loading
Python and deja's modules. ``deja server start`` keeps one process with them
loaded; the console script (``entry.py``) hands it the command, the folder, the
environment and its own stdin, stdout and stderr (``client.py``), and a fork of the
server runs the command exactly as the console script would have, with those
(``server.py``). Where no server answers, the command runs as before.

- ``place.py``: where the server listens (a socket in a private folder), shared by both.
- ``client.py``: the console script's side; the standard library only (it runs first).
- ``server.py``: the server's loop and the fork that runs a command.

``docs/server.md`` tells a user what it does and when it is not used.
"""
