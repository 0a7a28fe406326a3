import { join } from "node:path";
import { run } from "../../../edgectl/run.js";
import { runOwned } from "../../../testkit/owned-process.js";
import { ROOT } from "../../../testkit/pusher-process.js";
import type { FaultContext } from "../scenario.js";

/** Exit code and output of one edgectl invocation. */
export interface CtlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A JS stack frame line, as a leaked stack trace would show it. */
export const STACK_FRAME = /^\s+at .+(\(.*:\d+:\d+\)|:\d+:\d+)\s*$/m;

/** Runs edgectl in this process through its `run(argv, io)` entry (the binary's only logic). */
export async function edgectlInProcess(
  ctx: FaultContext,
  argv: readonly string[],
  env: Record<string, string>,
): Promise<CtlResult> {
  let stdout = "";
  let stderr = "";
  const code = await run(argv, {
    env,
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    isTTY: false,
    cwd: ROOT,
  });
  ctx.transcript.add(`edgectl ${argv[0] ?? ""}`, "cli", stdout + stderr);
  return { code, stdout, stderr };
}

/** Runs the real `bin/edgectl.js` as a child process. */
export async function edgectlBinary(
  ctx: FaultContext,
  argv: readonly string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<CtlResult> {
  const r = await runOwned(
    `edgectl ${argv[0] ?? ""}`,
    process.execPath,
    [join(ROOT, "bin/edgectl.js"), ...argv],
    {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, ...env },
      cwd: ROOT,
      timeoutMs,
    },
  );
  ctx.transcript.add(`edgectl ${argv[0] ?? ""}`, "cli", r.output);
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}
