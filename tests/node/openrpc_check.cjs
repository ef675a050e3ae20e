// Validates and dereferences protocol/openrpc.json with the OpenRPC project's own tooling
// (@open-rpc/schema-utils-js, installed under editors/vscode/node_modules by the Makefile).
// Prints one JSON line: {ok, methods, derefMs, error?}. Usage: node openrpc_check.cjs DOC MODULES
"use strict";
const fs = require("node:fs");
const path = require("node:path");

async function main() {
  const [documentPath, modules] = process.argv.slice(2);
  const utils = require(path.resolve(modules, "@open-rpc", "schema-utils-js"));
  const document = JSON.parse(fs.readFileSync(documentPath, "utf8"));
  const started = performance.now();
  const validation = utils.validateOpenRPCDocument(document);
  if (validation !== true) {
    throw new Error(`invalid: ${validation.message || JSON.stringify(validation)}`);
  }
  const dereferenced = await utils.parseOpenRPCDocument(document, { validate: true, dereference: true });
  const derefMs = performance.now() - started;
  const leftover = JSON.stringify(dereferenced.methods, (key, value) => {
    if (key === "$ref") throw new Error(`unresolved $ref ${value}`);
    return value;
  });
  const firstWithParams = dereferenced.methods.find((m) => m.params.length > 0);
  process.stdout.write(
    JSON.stringify({
      ok: true,
      methods: dereferenced.methods.length,
      derefMs,
      sampleParam: firstWithParams ? firstWithParams.params[0].schema : null,
      errorsResolved: dereferenced.methods.every((m) => (m.errors || []).every((e) => typeof e.code === "number")),
      size: leftover.length,
    }) + "\n",
  );
}

main().catch((error) => {
  process.stdout.write(JSON.stringify({ ok: false, error: String(error && error.message ? error.message : error) }) + "\n");
  process.exitCode = 1;
});
