/**
 * `npm run docs:pusher-env`: writes the pusher's variable table into docs/reference.md §5 between
 * the `pusher-env` markers, from `PUSHER_ENV` in pusher/config.ts
 * (test/pusher/env-docs-section.test.ts fails when the file is out of date).
 *
 *   tsx scripts/docs-pusher-env.ts
 */
import { replaceEnvTableSection } from "../pusher/env-docs-section.js";
import { rewriteReference } from "./rewrite-doc.js";

rewriteReference("docs:pusher-env", replaceEnvTableSection);
