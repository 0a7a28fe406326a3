/**
 * `npm run docs:env`: writes the Worker's, the pusher's and edgectl's variable tables into
 * docs/reference.md (§4, §5, §6) between their markers, from the code that defines them
 * (test/docs/env-tables.test.ts fails when the file is out of date).
 *
 *   tsx scripts/docs-env.ts
 */
import { replaceEnvSections } from "./env-docs/env-sections.js";
import { rewriteReference } from "./rewrite-doc.js";

rewriteReference("docs:env", replaceEnvSections);
