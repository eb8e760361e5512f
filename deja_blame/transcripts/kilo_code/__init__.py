"""Kilo Code (the VS Code extension ``kilocode.kilo-code``, a fork of Roo Code and
Cline): ``<config>/<editor>/User/globalStorage/kilocode.kilo-code/tasks/<task id>/``,
Cline's task folders, read by Cline's reader."""

from __future__ import annotations

from deja_blame.transcripts.cline.tasks import task_agent

# the extension's tasks; Kilo's own command line keeps its sessions elsewhere, in
# another shape, so a handoff would start a session deja does not read here
PLUGIN = task_agent(
    id="kilo-code",
    label="kilo",
    display_name="Kilo Code",
    extension="kilocode.kilo-code",
    aliases=("kilo", "kilocode"),
)

__all__ = ["PLUGIN"]
