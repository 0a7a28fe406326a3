import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Etcd3 } from "etcd3";
import type { Cleanup } from "../bench/lib/cleanup.js";
import { type OwnedProcess, spawnOwned } from "../testkit/owned-process.js";
import { ROOT } from "../testkit/pusher-process.js";
import { CHECKED_POOLS, CHECKERS, HEARTBEAT_INTERVAL, HEARTBEAT_TTL, POOLS } from "./layout.js";

/** One heartbeat process: `edgectl heartbeat POOL [--checker NAME]`, serving its /metrics. */
export interface Heartbeat {
  /** `p02` or `p18/a`. */
  readonly name: string;
  readonly pool: string;
  readonly checker: string | undefined;
  /** The port its /metrics listens on (it picks one; read from its log), once known. */
  port: number | null;
  proc: OwnedProcess;
  startedAt: number;
}

/** The soak's heartbeats: one per pool, three on each of `CHECKED_POOLS`. */
export interface HeartbeatFleet {
  readonly heartbeats: Heartbeat[];
  /** Resolves once every heartbeat has its key on a lease; throws if one exits or 60 s pass. */
  registered(): Promise<void>;
  /** SIGKILLs a heartbeat and starts it again. */
  restart(hb: Heartbeat): Promise<void>;
}

/** What the fleet needs: etcd, where each pool's origin is, and the child's environment. */
export interface FleetDeps {
  readonly client: Etcd3;
  readonly prefix: string;
  readonly originOf: ReadonlyMap<string, string>;
  readonly env: NodeJS.ProcessEnv;
}

/** Spawns every heartbeat of the soak; the cleanup stops them. */
export function startHeartbeatFleet(deps: FleetDeps, cleanup: Cleanup): HeartbeatFleet {
  const spawnHeartbeat = (hb: Heartbeat) => {
    hb.port = null;
    let head = "";
    hb.proc = spawnOwned(
      `heartbeat ${hb.name}`,
      process.execPath,
      [
        join(ROOT, "bin/edgectl.js"),
        "heartbeat",
        hb.pool,
        ...(hb.checker ? ["--checker", hb.checker] : []),
        ...["--ttl", String(HEARTBEAT_TTL), "--interval", String(HEARTBEAT_INTERVAL)],
        ...["--check-url", `${deps.originOf.get(hb.pool)}/healthz`],
        ...["--listen", "127.0.0.1:0"],
      ],
      {
        env: deps.env,
        cwd: ROOT,
        outputLimit: 20_000,
        onOutput: (text) => {
          if (hb.port !== null || head.length > 20_000) return;
          head += text;
          const port = /"listen":"127\.0\.0\.1:(\d+)"/.exec(head)?.[1];
          if (port) hb.port = Number(port);
        },
      },
    );
    hb.startedAt = Date.now();
  };
  const heartbeats: Heartbeat[] = [];
  for (const pool of POOLS) {
    const checkers = (CHECKED_POOLS as readonly string[]).includes(pool) ? CHECKERS : [undefined];
    for (const checker of checkers) {
      const hb = { name: checker ? `${pool}/${checker}` : pool, pool, checker } as Heartbeat;
      spawnHeartbeat(hb);
      heartbeats.push(hb);
    }
  }
  cleanup.add("heartbeats", async () => {
    await Promise.all(heartbeats.map((h) => h.proc.stop(3_000)));
  });
  return {
    heartbeats,
    async registered() {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const res = await deps.client.getAll().prefix(`${deps.prefix}health/`).exec();
        const leased = res.kvs.filter((k) => k.lease !== "0").length;
        if (leased >= heartbeats.length) return;
        const dead = heartbeats.find((h) => !h.proc.alive());
        if (dead)
          throw new Error(`heartbeat ${dead.name} exited:\n${dead.proc.output().slice(-1500)}`);
        if (Date.now() > deadline)
          throw new Error(`only ${leased} of ${heartbeats.length} heartbeats registered in 60 s`);
        await sleep(250);
      }
    },
    async restart(hb) {
      await hb.proc.kill9();
      spawnHeartbeat(hb);
    },
  };
}
