/**
 * `npm run docs:cli-json`: writes the `-o json` shapes into docs/reference.md between the
 * `cli-json` markers, from the zod schemas edgectl emits with (test/edgectl/json-docs.test.ts fails
 * when the file is out of date).
 *
 *   tsx scripts/docs-cli-json.ts
 */
import { replaceShapeSection } from "../edgectl/output/shape-docs-section.js";
import { rewriteReference } from "./rewrite-doc.js";

rewriteReference("docs:cli-json", replaceShapeSection);
