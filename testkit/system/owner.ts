import { type OwnedProcess, spawnOwned } from "../owned-process.js";

/** A child to start: what {@link Owner.spawn} runs. */
export interface SpawnSpec {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** A one-shot command (e.g. `edgectl apply`): its exit is not a failure of the system. */
  readonly oneShot?: boolean;
  /**
   * A part the user may kill on purpose to watch failover (a heartbeat): its death is reported by
   * name, but the system keeps running.
   */
  readonly expendable?: boolean;
  /** Higher stops earlier; equal priorities stop newest first. */
  readonly stopPriority?: number;
}

/**
 * Who stops what the system launcher starts: the bench's and the soak's `Cleanup` (through
 * {@link cleanupOwner}) or the local stack's `Supervisor` (scripts/stack/supervisor.ts).
 */
export interface Owner {
  /** Registers how to stop a part started in this process (a server, a client, a directory). */
  add(name: string, stop: () => Promise<void> | void): unknown;
  /** Starts a child in its own process group; the owner stops it. */
  spawn(spec: SpawnSpec): OwnedProcess;
}

/** Anything that runs teardown steps newest first (`bench/lib/cleanup.ts`'s `Cleanup`). */
export interface Teardown {
  add(name: string, run: () => Promise<void> | void): unknown;
}

/** An {@link Owner} over teardown steps: a child it spawns is stopped by a step of its own. */
export function cleanupOwner(teardown: Teardown): Owner {
  return {
    add: (name, stop) => teardown.add(name, stop),
    spawn(spec) {
      const proc = spawnOwned(spec.name, spec.command, spec.args, {
        env: spec.env,
        cwd: spec.cwd,
      });
      teardown.add(spec.name, () => proc.stop(5_000));
      return proc;
    },
  };
}
