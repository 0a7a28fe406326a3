import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Cleanup } from "../bench/lib/cleanup.js";
import { type OwnedProcess, spawnOwned } from "../testkit/owned-process.js";
import { ROOT } from "../testkit/pusher-process.js";
import { unitMemoryEnvironment } from "../testkit/unit-environment.js";
import { OBSERVER_INTERVAL, OBSERVER_MIN_SAMPLES, OBSERVER_TTL } from "./layout.js";
import type { ObserverLease } from "./observed-leases.js";

/** The soak's `edgectl observe`: one process at a time, killed and started again by the chaos. */
export interface SoakObserver {
  /** The running process. */
  readonly proc: OwnedProcess;
  /** When the running process started (ms). */
  readonly startedAt: number;
  /** The port of its `/metrics` and `/status` (read from its log), once known. */
  readonly port: number | null;
  /** Processes started so far (the first one included). */
  readonly starts: number;
  /** Every lease an observer process registered, in order, the live one's last. */
  leases(): readonly ObserverLease[];
  /** Resolves once the running process holds a lease; throws if it exits or `ms` pass. */
  registered(ms: number): Promise<void>;
  /** The running process's `/metrics`, or null when it does not answer. */
  metrics(): Promise<string | null>;
  /** SIGKILLs it and starts it again on the same `--state` file. */
  restart(): Promise<void>;
}

/** Where the observer polls and what it is given. */
export interface ObserverDeps {
  /** The Worker's URL (workerd's loopback socket). */
  readonly edgeUrl: string;
  /** The Worker's `OBSERVE_TOKEN`: passed in the environment, never on the command line. */
  readonly token: string;
  /** `ETCD_ENDPOINTS`, `ROUTING_PREFIX` and the rest of the child's environment. */
  readonly env: NodeJS.ProcessEnv;
  /** The `--state` file (in the soak's temporary directory). */
  readonly statePath: string;
}

interface LogLine {
  readonly event?: unknown;
  readonly lease?: unknown;
  readonly listen?: unknown;
}

/**
 * Starts `edgectl observe` against the Worker, with the memory settings of its systemd unit
 * (deploy/edge-observer.service: the old-space cap, glibc's arenas); the cleanup stops it.
 */
export function startObserver(deps: ObserverDeps, cleanup: Cleanup): SoakObserver {
  const unitEnv = unitMemoryEnvironment(
    readFileSync(join(ROOT, "deploy/edge-observer.service"), "utf8"),
  );
  const leases: ObserverLease[] = [];
  let proc: OwnedProcess;
  let startedAt = 0;
  let port: number | null = null;
  let starts = 0;

  const spawnOne = () => {
    port = null;
    let partial = "";
    const generation = starts;
    const onLine = (line: string) => {
      let j: LogLine;
      try {
        j = JSON.parse(line) as LogLine;
      } catch {
        return;
      }
      if (typeof j.listen === "string") {
        const m = /^127\.0\.0\.1:(\d+)$/.exec(j.listen);
        if (m) port = Number(m[1]);
      }
      if (j.event === "registered" && typeof j.lease === "string") {
        const now = Date.now();
        for (const l of leases) if (l.until === null) l.until = now;
        leases.push({ hex: j.lease, generation, from: now, until: null });
      }
    };
    proc = spawnOwned(
      "edgectl observe",
      process.execPath,
      [
        join(ROOT, "bin/edgectl.js"),
        "observe",
        ...["--edge", deps.edgeUrl],
        ...["--interval", String(OBSERVER_INTERVAL)],
        ...["--min-samples", String(OBSERVER_MIN_SAMPLES)],
        ...["--ttl", String(OBSERVER_TTL)],
        ...["--state", deps.statePath],
        ...["--listen", "127.0.0.1:0"],
      ],
      {
        env: { ...deps.env, ...unitEnv, OBSERVE_TOKEN: deps.token },
        cwd: ROOT,
        outputLimit: 50_000,
        onOutput: (text) => {
          partial += text;
          const lines = partial.split("\n");
          partial = lines.pop() ?? "";
          for (const line of lines) onLine(line);
        },
      },
    );
    startedAt = Date.now();
    starts += 1;
  };
  spawnOne();
  cleanup.add("edgectl observe", () => proc.stop(3_000));

  return {
    get proc() {
      return proc;
    },
    get startedAt() {
      return startedAt;
    },
    get port() {
      return port;
    },
    get starts() {
      return starts;
    },
    leases: () => leases,
    async registered(ms) {
      const deadline = Date.now() + ms;
      const generation = starts - 1;
      while (!leases.some((l) => l.generation === generation)) {
        if (!proc.alive())
          throw new Error(`edgectl observe exited:\n${proc.output().slice(-1500)}`);
        if (Date.now() > deadline)
          throw new Error(
            `edgectl observe held no lease after ${ms / 1000} s:\n${proc.output().slice(-1500)}`,
          );
        await sleep(250);
      }
    },
    async metrics() {
      if (port === null) return null;
      try {
        const res = await fetch(`http://127.0.0.1:${port}/metrics`, {
          signal: AbortSignal.timeout(3_000),
        });
        return res.ok ? await res.text() : null;
      } catch {
        return null;
      }
    },
    async restart() {
      await proc.kill9();
      const now = Date.now();
      for (const l of leases) if (l.until === null) l.until = now;
      spawnOne();
    },
  };
}
