// The part of VS Code's API extension.js uses, recorded instead of drawn: the
// decorations set per editor, the messages shown, the commands registered. The
// language client is a plain JSON-RPC client over the real `deja lsp`'s pipes
// (lsp_client.js), standing in for vscode-languageclient, which needs VS Code.
"use strict";

const { EventEmitter } = require("events");

class Range {
  constructor(startLine, startCharacter, endLine, endCharacter) {
    this.start = { line: startLine, character: startCharacter };
    this.end = { line: endLine, character: endCharacter };
  }
}

function makeVscode({ settings, editors }) {
  const events = new EventEmitter();
  const shown = [];
  const commands = new Map();
  let nextType = 0;
  const on = (name) => (handler) => {
    events.on(name, handler);
    return { dispose: () => events.off(name, handler) };
  };
  const vscode = {
    Range,
    OverviewRulerLane: { Left: 1 },
    Uri: { parse: (text) => ({ toString: () => text }) },
    window: {
      visibleTextEditors: editors,
      createTextEditorDecorationType: (options) => ({ id: nextType++, options, dispose() {} }),
      onDidChangeActiveTextEditor: on("activeEditor"),
      showWarningMessage: (text) => shown.push(text),
    },
    workspace: {
      getConfiguration: (section) => ({
        get: (key, fallback) => {
          const value = settings[`${section}.${key}`];
          return value === undefined ? fallback : value;
        },
      }),
      onDidChangeTextDocument: on("changeDocument"),
      onDidSaveTextDocument: on("saveDocument"),
      onDidChangeConfiguration: on("changeConfiguration"),
    },
    commands: {
      registerCommand: (name, run) => {
        commands.set(name, run);
        return { dispose: () => commands.delete(name) };
      },
      executeCommand: (name, ...args) => commands.get(name)(...args),
    },
  };
  return { vscode, events, shown, commands };
}

// an editor showing the file at `path`: what extension.js reads of it, and the
// decorations it was given (type id -> ranges), newest last
function makeEditor(path) {
  const uri = require("url").pathToFileURL(path).toString();
  const editor = {
    document: { uri: { scheme: "file", toString: () => uri } },
    painted: new Map(),
    paints: 0,
    setDecorations(type, ranges) {
      this.painted.set(type.id, ranges);
      this.paints += 1;
    },
  };
  return editor;
}

module.exports = { makeVscode, makeEditor, Range };
