// A plain LSP client over a subprocess's pipes: what extension.js asks of
// vscode-languageclient's LanguageClient (start, stop, sendRequest,
// onNotification), and didOpen/didChange as VS Code's document sync sends them.
"use strict";

const { spawn } = require("child_process");
const fs = require("fs");
const url = require("url");

class LanguageClient {
  constructor(id, name, server, options) {
    this.server = server;
    this.options = options;
    this.nextId = 0;
    this.waiting = new Map();
    this.handlers = new Map();
    this.buffer = Buffer.alloc(0);
    this.stderr = "";
    LanguageClient.started.push(this);
  }

  start() {
    return new Promise((resolve, reject) => {
      this.proc = spawn(this.server.command, this.server.args, {
        env: process.env,
        stdio: ["pipe", "pipe", "pipe"],
      });
      this.proc.on("error", reject); // e.g. ENOENT: no such program
      this.proc.stderr.on("data", (d) => (this.stderr += d));
      this.proc.stdout.on("data", (d) => this.receive(d));
      this.proc.on("spawn", async () => {
        try {
          await this.sendRequest("initialize", {
            processId: process.pid,
            rootUri: null,
            capabilities: { workspace: { codeLens: { refreshSupport: true } } },
          });
          this.sendNotification("initialized", {});
          for (const editor of LanguageClient.editors) {
            const uri = editor.document.uri.toString();
            const text = fs.readFileSync(url.fileURLToPath(uri), "utf8");
            this.sendNotification("textDocument/didOpen", {
              textDocument: { uri, languageId: "python", version: 1, text },
            });
          }
          resolve();
        } catch (err) {
          reject(err);
        }
      });
    });
  }

  receive(data) {
    this.buffer = Buffer.concat([this.buffer, data]);
    for (;;) {
      const end = this.buffer.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = Number(/Content-Length: (\d+)/i.exec(this.buffer.slice(0, end).toString())[1]);
      if (this.buffer.length < end + 4 + length) return;
      const message = JSON.parse(this.buffer.slice(end + 4, end + 4 + length).toString());
      this.buffer = this.buffer.slice(end + 4 + length);
      if (message.method && message.id !== undefined) {
        this.send({ id: message.id, result: null }); // a request from the server
      } else if (message.method) {
        for (const handler of this.handlers.get(message.method) || []) handler(message.params);
      } else if (this.waiting.has(message.id)) {
        const { resolve, reject } = this.waiting.get(message.id);
        this.waiting.delete(message.id);
        if (message.error) reject(new Error(message.error.message));
        else resolve(message.result);
      }
    }
  }

  send(message) {
    const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", ...message }));
    this.proc.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
    this.proc.stdin.write(body);
  }

  sendRequest(method, params) {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.send({ id, method, params });
    });
  }

  sendNotification(method, params) {
    this.send({ method, params });
  }

  onNotification(method, handler) {
    this.handlers.set(method, [...(this.handlers.get(method) || []), handler]);
    return { dispose: () => this.handlers.set(method, []) };
  }

  async stop() {
    if (!this.proc || this.proc.exitCode !== null) return;
    await this.sendRequest("shutdown", null);
    this.sendNotification("exit", null);
    await new Promise((resolve) => this.proc.on("exit", resolve));
  }
}
LanguageClient.started = [];
LanguageClient.editors = [];

module.exports = { LanguageClient };
