/**
 * The CAS mutant's entry point: `edgectl` as `edgectl/main.ts` runs it, but committing under
 * {@link BROKEN_CAS}. `cas-mutant.ts` bundles it; the fault suite runs the bundle in place of
 * `bin/edgectl.js`.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { CommitRules } from "../../../edgectl/apply/commit.js";
import { processSink } from "../../../edgectl/cli/process-sink.js";
import { run } from "../../../edgectl/run.js";

/**
 * The epoch compare always holds, and the lock is taken 300 to 700 ms after the plan (as an
 * operator reading it would), so concurrent applies reliably commit on stale reads and the
 * checker has something to catch.
 */
const BROKEN_CAS: CommitRules = {
  epochCompare: (client, epochKey) => client.if(epochKey, "Version", "<", 1_000_000_000),
  beforeLock: () => sleep(300 + Math.random() * 400),
};

const code = await run(
  process.argv.slice(2),
  {
    env: process.env,
    stdout: processSink(process.stdout),
    stderr: processSink(process.stderr),
    isTTY: false,
    cwd: process.cwd(),
  },
  BROKEN_CAS,
);
process.exitCode = code;
setImmediate(() => process.exit(code));
