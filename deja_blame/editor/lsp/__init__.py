"""``deja lsp``: a Language Server Protocol server on stdio.

The pipeline, in the order a message travels:

- ``protocol``: JSON-RPC messages with ``Content-Length`` framing;
- ``server``: one handler per LSP method; work runs on a worker thread;
- ``documents``: an open file's blame, kept in step with the unsaved buffer;
- ``render``: lenses, hovers and gutter runs from the attribution API's data.

The server only translates: attribution stays in ``deja_blame.attribution``.
"""

from deja_blame.editor.lsp.server import serve

__all__ = ["serve"]
