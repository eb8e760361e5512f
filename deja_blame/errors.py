"""One root error type. The CLI turns a DejaError into a one-line message, exit 1."""

from __future__ import annotations


class DejaError(Exception):
    """A known failure: the message is shown to the user as is.

    ``hint`` is an optional second line naming the command that fixes it.
    """

    def __init__(self, message: str, hint: str | None = None, exit_code: int = 1) -> None:
        super().__init__(message)
        self.hint = hint
        # 1; git's own code where deja refuses what git refuses (128: no such path)
        self.exit_code = exit_code


class IndexCorruptError(DejaError):
    pass


class NotARepositoryError(DejaError):
    pass


class UnsupportedRepositoryError(DejaError):
    """A repository deja cannot read (SHA-256 object names: libgit2 cannot open them)."""


class RevisionError(DejaError):
    pass


class BinaryFileError(DejaError):
    """A file with no lines to blame (deja stats lists it as "binary")."""
