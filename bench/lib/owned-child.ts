import type { ChildProcess } from "node:child_process";
import type { Cleanup } from "./cleanup.js";
import { sleep } from "./sleep.js";

/** A spawned child the bench owns: its last stderr, its exit, and a stop run by the cleanup. */
export interface OwnedChild {
  /** The last 50 chunks of its stderr. */
  readonly stderr: string[];
  /** Resolves when it has exited. */
  readonly exited: Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`; nothing when it has already exited. */
  readonly stop: () => Promise<void>;
}

/** Takes charge of `child`: keeps its stderr tail and registers its stop as `name`. */
export function ownChild(
  child: ChildProcess,
  name: string,
  cleanup: Cleanup,
  graceMs: number,
): OwnedChild {
  const stderr: string[] = [];
  child.stderr?.on("data", (d: Buffer) => {
    stderr.push(d.toString());
    if (stderr.length > 50) stderr.shift();
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const done = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
    if (!done) {
      child.kill("SIGKILL");
      await exited;
    }
  };
  cleanup.add(name, stop);
  return { stderr, exited, stop };
}
