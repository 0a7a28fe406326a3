import { type ExitInfo, type OwnedProcess, spawnOwned } from "../../testkit/owned-process.js";
import type { Owner, SpawnSpec } from "../../testkit/system/owner.js";
import type { PrefixedOutput } from "./output.js";

export type { ExitInfo, SpawnSpec };

/** A child the supervisor started, in its own process group. */
export interface Managed extends OwnedProcess {
  /** Whether the child has exited. */
  readonly done: boolean;
}

/**
 * Starts children in their own process groups (so `kill -PGID` reaches grandchildren such as
 * wrangler's workerd), prefixes their output, reports unexpected exits, and stops them all.
 */
export class Supervisor implements Owner {
  private readonly children: { managed: Managed; priority: number }[] = [];
  private readonly steps: { name: string; stop: () => Promise<void> | void }[] = [];
  private stopping = false;

  constructor(
    private readonly output: PrefixedOutput,
    private readonly onUnexpectedExit: (m: Managed, info: ExitInfo, spec: SpawnSpec) => void,
  ) {}

  /** Starts a child; its stdout/stderr lines appear under `[name]`. */
  spawn(spec: SpawnSpec): Managed {
    const owned = spawnOwned(spec.name, spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      outputLimit: 0,
    });
    const { child } = owned;
    if (owned.pid <= 0) throw new Error(`${spec.name}: could not start ${spec.command}`);
    child.once("error", (err) => this.output.line(spec.name, `failed to start: ${err.message}`));
    const managed: Managed = {
      ...owned,
      get done() {
        return !owned.alive();
      },
    };
    if (child.stdout) this.output.pipe(spec.name, child.stdout);
    if (child.stderr) this.output.pipe(spec.name, child.stderr);
    this.children.push({ managed, priority: spec.stopPriority ?? 0 });
    void owned.exited.then((info) => {
      if (!this.stopping && !spec.oneShot) this.onUnexpectedExit(managed, info, spec);
    });
    return managed;
  }

  /** Registers how to stop a part started in this process; it stops after every child. */
  add(name: string, stop: () => Promise<void> | void): void {
    this.steps.push({ name, stop });
  }

  /** The process-group ids of every child started (for tests and diagnostics). */
  pids(): number[] {
    return this.children.map((c) => c.managed.pid);
  }

  /**
   * Stops every child (by priority, then newest first): SIGTERM to the child itself so it can
   * shut down in order (the pusher flushes through its own workerd), SIGKILL after `graceMs`,
   * then whatever is left of its process group; then the parts of {@link add}, newest first.
   */
  async stopAll(graceMs = 5_000): Promise<void> {
    this.stopping = true;
    const order = this.children
      .map((c, i) => ({ ...c, i }))
      .sort((a, b) => b.priority - a.priority || b.i - a.i);
    for (const c of order) await this.stopOne(c.managed, graceMs);
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step.stop();
      } catch (e) {
        this.output.line(step.name, `did not stop: ${String(e)}`);
      }
    }
  }

  private async stopOne(m: Managed, graceMs: number): Promise<void> {
    await m.stop(graceMs, () =>
      this.output.line(m.name, `did not stop within ${graceMs} ms; killing`),
    );
  }
}
