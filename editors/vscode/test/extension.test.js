// extension.js against a real `deja lsp`, VS Code's API recorded (fake_vscode.js):
// the gutter colours per session, the gutter setting, the repaint when the server
// says the annotations changed, and the message when deja cannot be started.
// Run by tests/test_vscode_extension.py, which builds the repository and its
// transcripts and passes them in the environment:
//   DEJA_EXE     the deja program      DEJA_FILE  the file the editor shows
//   DEJA_EXPECT  JSON: {"runs": [[start, end, session], ...]} (0-based lines)
"use strict";

const assert = require("node:assert/strict");
const { test, afterEach } = require("node:test");
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const Module = require("node:module");
const { makeVscode, makeEditor } = require("./fake_vscode");
const { LanguageClient } = require("./lsp_client");

const EXTENSION = path.join(__dirname, "..", "extension.js");
const expect = JSON.parse(process.env.DEJA_EXPECT || "{}");

function load(settings) {
  const editor = makeEditor(process.env.DEJA_FILE);
  const fake = makeVscode({ settings, editors: [editor] });
  LanguageClient.editors = [editor];
  const original = Module._load;
  Module._load = function (request, ...rest) {
    if (request === "vscode") return fake.vscode;
    if (request === "vscode-languageclient/node") return { LanguageClient };
    return original.call(this, request, ...rest);
  };
  try {
    delete require.cache[require.resolve(EXTENSION)];
    return { ext: require(EXTENSION), editor, ...fake };
  } finally {
    Module._load = original;
  }
}

async function until(what, check, seconds = 30) {
  const deadline = Date.now() + seconds * 1000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// what the editor shows: [start, end, decoration type] per coloured run, by line
function painted(editor) {
  const out = [];
  for (const [type, ranges] of editor.painted) {
    for (const r of ranges) out.push([r.range.start.line, r.range.end.line, type]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

afterEach(async () => {
  for (const client of LanguageClient.started.splice(0)) await client.stop();
});

test("each session's lines get a colour of their own, from deja lsp", async () => {
  const { ext, editor } = load({ "deja.executable": process.env.DEJA_EXE });
  await ext.activate({ subscriptions: [] });
  await until("the gutter", () => painted(editor).length === expect.runs.length);
  const got = painted(editor);
  // one colour (decoration type) per session, in the order the sessions appear
  const colourOf = new Map();
  expect.runs.forEach(([, , session]) => colourOf.has(session) || colourOf.set(session, colourOf.size));
  assert.deepEqual(got, expect.runs.map(([s, e, session]) => [s, e, colourOf.get(session)]));
  assert.ok(new Set(got.map((r) => r[2])).size >= 2, "two sessions, two colours");
  const labels = [...editor.painted.values()].flat().map((r) => r.hoverMessage);
  assert.ok(labels.every((l) => /^\w+ [0-9a-f]{8} \d{4}-\d\d-\d\d/.test(l)), labels.join("\n"));
  await ext.deactivate();
});

test("the deja.gutter setting turned off clears the colours", async () => {
  const settings = { "deja.executable": process.env.DEJA_EXE };
  const { ext, editor, events } = load(settings);
  await ext.activate({ subscriptions: [] });
  await until("the gutter", () => painted(editor).length > 0);
  settings["deja.gutter"] = false;
  events.emit("changeConfiguration", { affectsConfiguration: (key) => key === "deja.gutter" });
  await until("the cleared gutter", () => painted(editor).length === 0);
  await ext.deactivate();
});

test("a commit the editor reloads is repainted when the server says so", async () => {
  const { ext, editor } = load({ "deja.executable": process.env.DEJA_EXE });
  await ext.activate({ subscriptions: [] });
  await until("the gutter", () => painted(editor).length === expect.runs.length);
  const before = editor.paints;
  // a person rewrites the first line of the first session's run, and commits
  const file = process.env.DEJA_FILE;
  const lines = fs.readFileSync(file, "utf8").split("\n");
  const [first] = expect.runs[0];
  lines[first] = lines[first] + "  # reviewed";
  const text = lines.join("\n");
  fs.writeFileSync(file, text);
  const cwd = path.dirname(file);
  execFileSync("git", ["commit", "-qam", "reviewed"], { cwd });
  // VS Code reloads the changed file and its document sync tells the server
  const [client] = LanguageClient.started;
  client.sendNotification("textDocument/didChange", {
    textDocument: { uri: editor.document.uri.toString(), version: 2 },
    contentChanges: [{ text }],
  });
  await until("the repaint", () => editor.paints > before && painted(editor)[0][0] === first + 1);
  await ext.deactivate();
});

test("a deja that cannot be started says how to name it", async () => {
  const { ext, shown } = load({ "deja.executable": "/nonexistent/deja" });
  await ext.activate({ subscriptions: [] });
  assert.equal(shown.length, 1);
  assert.match(shown[0], /could not start "deja lsp".*Set deja\.executable/);
});
