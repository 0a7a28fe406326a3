/**
 * `npm run docs:pusher-env`: writes the pusher's variable table into docs/reference.md §5 between
 * the `pusher-env` markers, from `PUSHER_ENV` in pusher/config.ts
 * (test/pusher/env-docs-section.test.ts fails when the file is out of date).
 *
 *   tsx scripts/docs-pusher-env.ts
 */
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { replaceEnvTableSection } from "../pusher/env-docs-section.js";

const path = resolve(import.meta.dirname, "../docs/reference.md");
const before = readFileSync(path, "utf8");
const after = replaceEnvTableSection(before);
if (after !== before) writeFileSync(path, after);
process.stderr.write(
  `docs:pusher-env: docs/reference.md ${after === before ? "was up to date" : "updated"}\n`,
);
