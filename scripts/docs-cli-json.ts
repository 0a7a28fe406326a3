/**
 * `npm run docs:cli-json`: writes the `-o json` shapes into docs/reference.md between the
 * `cli-json` markers, from the zod schemas edgectl emits with (test/edgectl/json-docs.test.ts fails
 * when the file is out of date).
 *
 *   tsx scripts/docs-cli-json.ts
 */
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { replaceShapeSection } from "../edgectl/output/shape-docs-section.js";

const path = resolve(import.meta.dirname, "../docs/reference.md");
const before = readFileSync(path, "utf8");
const after = replaceShapeSection(before);
if (after !== before) writeFileSync(path, after);
process.stderr.write(
  `docs:cli-json: docs/reference.md ${after === before ? "was up to date" : "updated"}\n`,
);
