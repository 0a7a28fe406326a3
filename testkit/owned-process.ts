import { type ChildProcess, spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";

/** How a child ended: its exit code, or the signal that killed it. */
export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * A child process that tests, the bench and the local stack started, leading its own process
 * group, so that a signal reaches its children too (the pusher's workerd, wrangler's workerd).
 */
export interface OwnedProcess {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resolves once it has exited (or failed to start). */
  readonly exited: Promise<ExitInfo>;
  /** stdout + stderr so far (the last `outputLimit` characters). */
  output(): string;
  alive(): boolean;
  /** Sends `signal` to the process group it leads (only processes this code started). */
  signal(signal: NodeJS.Signals): void;
  /** `kill -9` of the group, and wait for the exit. */
  kill9(): Promise<void>;
  /**
   * SIGTERM to the process itself, so it can shut down in order (the pusher flushes through its
   * own workerd); SIGKILL to its group after `graceMs` (then `onForcedKill` is called); finally
   * whatever is left of its group is terminated, then killed.
   */
  stop(graceMs?: number, onForcedKill?: () => void): Promise<void>;
}

/** How to start one owned process. */
export interface SpawnOwnedOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** Called with every chunk of stdout and stderr. */
  readonly onOutput?: (text: string) => void;
  /** How many characters `output()` keeps (the newest); default all. */
  readonly outputLimit?: number;
  /** `pipe` to write to its stdin; default `ignore`. */
  readonly stdin?: "pipe" | "ignore";
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Spawns `command args` detached (its own process group) so it can be signalled as a group. */
export function spawnOwned(
  name: string,
  command: string,
  args: readonly string[],
  opts: SpawnOwnedOptions,
): OwnedProcess {
  const child = spawn(command, [...args], {
    env: opts.env,
    cwd: opts.cwd,
    detached: true,
    stdio: [opts.stdin ?? "ignore", "pipe", "pipe"],
  });
  const limit = opts.outputLimit ?? Number.POSITIVE_INFINITY;
  let kept = "";
  const onText = (text: string) => {
    if (limit > 0) {
      kept += text;
      if (kept.length > limit) kept = kept.slice(-limit);
    }
    opts.onOutput?.(text);
  };
  const onData = (d: Buffer) => onText(d.toString("utf8"));
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  let done = false;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once("error", (err) => {
      onText(`failed to start: ${err.message}\n`);
      if (child.pid === undefined) {
        done = true;
        resolve({ code: null, signal: null });
      }
    });
    child.once("exit", (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
  });
  const pid = child.pid ?? -1;
  const signalGroup = (sig: NodeJS.Signals) => {
    if (pid <= 0) return;
    try {
      process.kill(-pid, sig);
    } catch {
      try {
        if (!done) process.kill(pid, sig);
      } catch {
        // already gone
      }
    }
  };
  return {
    name,
    pid,
    child,
    exited,
    output: () => kept,
    alive: () => !done,
    signal: (sig) => {
      if (!done) signalGroup(sig);
    },
    async kill9() {
      signalGroup("SIGKILL");
      await exited;
    },
    async stop(graceMs = 8_000, onForcedKill) {
      if (!done) {
        signalGroup("SIGCONT");
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          // exited meanwhile
        }
        const timedOut = await Promise.race([
          exited.then(() => false),
          sleep(graceMs).then(() => true),
        ]);
        if (timedOut) {
          onForcedKill?.();
          signalGroup("SIGKILL");
          await Promise.race([exited, sleep(2_000)]);
        }
      }
      // Grandchildren may outlive the group leader: stop the rest of the group.
      if (pid > 0 && groupAlive(pid)) {
        signalGroup("SIGTERM");
        const deadline = Date.now() + 2_000;
        while (groupAlive(pid) && Date.now() < deadline) await sleep(50);
        signalGroup("SIGKILL");
        while (groupAlive(pid) && Date.now() < deadline + 2_000) await sleep(50);
      }
    },
  };
}

/** Runs a command to completion (owned, killed after `timeoutMs`). */
export async function runOwned(
  name: string,
  command: string,
  args: readonly string[],
  opts: { env: NodeJS.ProcessEnv; cwd: string; timeoutMs?: number },
): Promise<{ code: number; output: string; stdout: string; stderr: string }> {
  const p = spawnOwned(name, command, args, opts);
  let stdout = "";
  let stderr = "";
  p.child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString("utf8");
  });
  p.child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString("utf8");
  });
  const timer = setTimeout(() => p.signal("SIGKILL"), opts.timeoutMs ?? 60_000);
  const { code, signal } = await p.exited;
  clearTimeout(timer);
  return { code: code ?? (signal ? 128 : -1), output: p.output(), stdout, stderr };
}
