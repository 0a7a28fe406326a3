import { type ChildProcess, spawn } from "node:child_process";

/** A child process the suite started, in its own process group. */
export interface OwnedProcess {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resolves with the exit code (or 128 + signal number) once it has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** stdout + stderr so far. */
  output(): string;
  alive(): boolean;
  /** Sends `signal` to the process group it leads (only processes this suite started). */
  signal(signal: NodeJS.Signals): void;
  /** `kill -9` and wait for the exit. */
  kill9(): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Spawns `command args` detached (own process group) so it can be signalled as a group. */
export function spawnOwned(
  name: string,
  command: string,
  args: readonly string[],
  opts: { env: NodeJS.ProcessEnv; cwd: string; onOutput?: (text: string) => void },
): OwnedProcess {
  const child = spawn(command, [...args], {
    env: opts.env,
    cwd: opts.cwd,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const chunks: string[] = [];
  const onData = (d: Buffer) => {
    const text = d.toString("utf8");
    chunks.push(text);
    opts.onOutput?.(text);
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
  });
  const pid = child.pid ?? -1;
  const signalGroup = (sig: NodeJS.Signals) => {
    if (done || pid <= 0) return;
    try {
      process.kill(-pid, sig);
    } catch {
      try {
        process.kill(pid, sig);
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
    output: () => chunks.join(""),
    alive: () => !done,
    signal: signalGroup,
    async kill9() {
      signalGroup("SIGKILL");
      await exited;
    },
    async stop(graceMs = 8_000) {
      if (done) return;
      signalGroup("SIGCONT");
      signalGroup("SIGTERM");
      const timer = setTimeout(() => signalGroup("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
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

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
