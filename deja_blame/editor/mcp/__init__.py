"""``deja mcp``: a Model Context Protocol server on stdio, for coding agents.

The pipeline, in the order a message travels:

- ``protocol``: JSON-RPC messages, one per line;
- ``server``: the lifecycle (version negotiation), one handler per method;
- ``scope``: the repository a client names, its files, and what may leave it;
- ``tools``: why, blame, sessions and show, gathered from deja's library;
- ``paging``: a size cap per answer and a cursor for the rest;
- ``render``: compact text of the tools' data, for a model.

The server only translates: attribution stays in ``deja_blame.attribution``.
"""

from deja_blame.editor.mcp.server import serve

__all__ = ["serve"]
