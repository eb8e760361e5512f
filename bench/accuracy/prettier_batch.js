// Formats many files in one node process (prettier's API): reads
// {"options": {...}, "files": {path: text}} on stdin, writes {path: text}; a file
// prettier cannot parse comes back unchanged. Used by realhist.py's JavaScript mode.
const prettier = require(process.env.PRETTIER_PATH || "prettier");

let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", async () => {
  const { options, files } = JSON.parse(input);
  const out = {};
  for (const [path, text] of Object.entries(files)) {
    try {
      out[path] = await prettier.format(text, { ...options, filepath: path });
    } catch (e) {
      out[path] = text;
    }
  }
  process.stdout.write(JSON.stringify(out));
});
