"""Roo Code (the VS Code extension ``rooveterinaryinc.roo-cline``, a fork of Cline):
``<config>/<editor>/User/globalStorage/rooveterinaryinc.roo-cline/tasks/<task id>/``,
Cline's task folders, read by Cline's reader. A store moved by Roo's own setting
(``roo-cline.customStoragePath``) is named with ``DEJA_ROO_CODE_ROOT``."""

from __future__ import annotations

from deja_blame.transcripts.cline.tasks import task_agent

# an editor extension: no command line starts a Roo Code task (handoff: none)
PLUGIN = task_agent(
    id="roo-code",
    label="roo",
    display_name="Roo Code",
    extension="rooveterinaryinc.roo-cline",
    aliases=("roo", "roo-cline"),
)

__all__ = ["PLUGIN"]
