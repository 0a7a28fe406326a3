import { type ChildProcess, spawn } from "node:child_process";
import type { PrefixedOutput } from "./output.js";

/** How a child ended. */
export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A child the supervisor started, in its own process group. */
export interface Managed {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  readonly exited: Promise<ExitInfo>;
  /** Whether the child has exited. */
  readonly done: boolean;
}

/** What to run. */
export interface SpawnSpec {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** A one-shot command (e.g. `edgectl apply`): its exit is not a failure of the stack. */
  readonly oneShot?: boolean;
  /**
   * A part the user may kill on purpose to watch failover (a heartbeat): its death is reported by
   * name, but the stack keeps running (and exits 1 when stopped).
   */
  readonly expendable?: boolean;
  /** Higher stops earlier; equal priorities stop newest first. */
  readonly stopPriority?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone already
  }
}

/**
 * Starts children in their own process groups (so `kill -PGID` reaches grandchildren such as
 * wrangler's workerd), prefixes their output, reports unexpected exits, and stops them all.
 */
export class Supervisor {
  private readonly children: { managed: Managed; priority: number }[] = [];
  private stopping = false;

  constructor(
    private readonly output: PrefixedOutput,
    private readonly onUnexpectedExit: (m: Managed, info: ExitInfo, spec: SpawnSpec) => void,
  ) {}

  /** Starts a child; its stdout/stderr lines appear under `[name]`. */
  spawn(spec: SpawnSpec): Managed {
    const child = spawn(spec.command, [...spec.args], {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (child.pid === undefined) throw new Error(`${spec.name}: could not start ${spec.command}`);
    const state = { done: false };
    const exited = new Promise<ExitInfo>((resolve) => {
      child.once("error", (err) => {
        this.output.line(spec.name, `failed to start: ${err.message}`);
      });
      child.once("exit", (code, signal) => {
        state.done = true;
        resolve({ code, signal });
      });
    });
    const managed: Managed = {
      name: spec.name,
      pid: child.pid,
      child,
      exited,
      get done() {
        return state.done;
      },
    };
    if (child.stdout) this.output.pipe(spec.name, child.stdout);
    if (child.stderr) this.output.pipe(spec.name, child.stderr);
    this.children.push({ managed, priority: spec.stopPriority ?? 0 });
    void exited.then((info) => {
      if (!this.stopping && !spec.oneShot) this.onUnexpectedExit(managed, info, spec);
    });
    return managed;
  }

  /** The process-group ids of every child started (for tests and diagnostics). */
  pids(): number[] {
    return this.children.map((c) => c.managed.pid);
  }

  /**
   * Stops every child (by priority, then newest first): SIGTERM to the child itself so it can
   * shut down in order (the pusher flushes through its own workerd), SIGKILL after `graceMs`,
   * then whatever is left of its process group.
   */
  async stopAll(graceMs = 5_000): Promise<void> {
    this.stopping = true;
    const order = this.children
      .map((c, i) => ({ ...c, i }))
      .sort((a, b) => b.priority - a.priority || b.i - a.i);
    for (const c of order) await this.stopOne(c.managed, graceMs);
  }

  private async stopOne(m: Managed, graceMs: number): Promise<void> {
    if (!m.done) {
      try {
        process.kill(m.pid, "SIGTERM");
      } catch {
        // exited meanwhile
      }
      const timedOut = await Promise.race([
        m.exited.then(() => false),
        sleep(graceMs).then(() => true),
      ]);
      if (timedOut) {
        this.output.line(m.name, `did not stop within ${graceMs} ms; killing`);
        signalGroup(m.pid, "SIGKILL");
        await Promise.race([m.exited, sleep(2_000)]);
      }
    }
    // Grandchildren (wrangler's workerd) may outlive the group leader: stop the rest of the group.
    if (groupAlive(m.pid)) {
      signalGroup(m.pid, "SIGTERM");
      const deadline = Date.now() + 2_000;
      while (groupAlive(m.pid) && Date.now() < deadline) await sleep(50);
      signalGroup(m.pid, "SIGKILL");
      while (groupAlive(m.pid) && Date.now() < deadline + 2_000) await sleep(50);
    }
  }
}
