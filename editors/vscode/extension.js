// deja in VS Code: starts `deja lsp` (the server carries the behaviour: lenses,
// hovers, the deja.why / deja.handoff commands) and colours the gutter of each
// run of lines one agent session wrote, one colour per session.
"use strict";

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

// one colour per session in a file, in the order the sessions first appear
const PALETTE = ["#2bb3a3", "#c678dd", "#7fb347", "#e5b04f", "#5c9ded", "#e06c75", "#56b6c2"];

let client;
let decorations = [];
const pending = new Map();

function gutterIcon(colour) {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="4" height="16"><rect width="4" height="16" fill="${colour}"/></svg>`;
  return vscode.Uri.parse("data:image/svg+xml;utf8," + encodeURIComponent(svg));
}

function makeDecorations() {
  return PALETTE.map((colour) =>
    vscode.window.createTextEditorDecorationType({
      gutterIconPath: gutterIcon(colour),
      gutterIconSize: "contain",
      overviewRulerColor: colour,
      overviewRulerLane: vscode.OverviewRulerLane.Left,
    })
  );
}

async function paint(editor) {
  if (!client || !editor || editor.document.uri.scheme !== "file") return;
  const enabled = vscode.workspace.getConfiguration("deja").get("gutter", true);
  let runs = [];
  if (enabled) {
    try {
      const answer = await client.sendRequest("deja/annotations", {
        textDocument: { uri: editor.document.uri.toString() },
      });
      runs = (answer && answer.runs) || [];
    } catch (err) {
      return; // the server logs its own errors; the gutter stays as it was
    }
  }
  const byColour = decorations.map(() => []);
  for (const run of runs) {
    const range = new vscode.Range(run.start, 0, run.end, 0);
    byColour[run.colour % PALETTE.length].push({ range, hoverMessage: run.label });
  }
  decorations.forEach((type, i) => editor.setDecorations(type, byColour[i]));
}

function paintSoon(editor, delay) {
  const key = editor.document.uri.toString();
  clearTimeout(pending.get(key));
  pending.set(key, setTimeout(() => paint(editor), delay));
}

function paintVisible() {
  vscode.window.visibleTextEditors.forEach((editor) => paint(editor));
}

async function start(context) {
  const command = vscode.workspace.getConfiguration("deja").get("executable") || "deja";
  client = new LanguageClient(
    "deja",
    "deja",
    { command, args: ["lsp"] },
    { documentSelector: [{ scheme: "file" }] }
  );
  await client.start();
  context.subscriptions.push(client.onNotification("deja/annotationsChanged", paintVisible));
  paintVisible();
}

async function activate(context) {
  decorations = makeDecorations();
  context.subscriptions.push(...decorations);
  context.subscriptions.push(
    vscode.window.onDidChangeActiveTextEditor((editor) => editor && paint(editor)),
    vscode.workspace.onDidChangeTextDocument((event) => {
      for (const editor of vscode.window.visibleTextEditors) {
        if (editor.document === event.document) paintSoon(editor, 300);
      }
    }),
    vscode.workspace.onDidSaveTextDocument(() => setTimeout(paintVisible, 500)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("deja.gutter")) paintVisible();
      if (event.affectsConfiguration("deja.executable")) vscode.commands.executeCommand("deja.restart");
    }),
    vscode.commands.registerCommand("deja.restart", async () => {
      if (client) await client.stop();
      await start(context);
    })
  );
  try {
    await start(context);
  } catch (err) {
    vscode.window.showWarningMessage(
      `deja: could not start "deja lsp" (${err.message}). Set deja.executable to your deja.`
    );
  }
}

async function deactivate() {
  if (client) await client.stop();
}

module.exports = { activate, deactivate };
