import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Etcd3 } from "etcd3";
import { fastRecoveryBreaker } from "../adapters/etcd-fault-handling.js";
import type { Cleanup } from "../bench/lib/cleanup.js";
import type { EtcdCluster } from "../testkit/etcd-cluster.js";
import type { KvStandin } from "../testkit/kv-standin.js";
import { type OriginServer, type Origins, startOrigins } from "../testkit/origins.js";
import { type PusherProcess, ROOT, startPusherProcess } from "../testkit/pusher-process.js";
import { COUNTRIES } from "../testkit/sample-countries.js";
import { etcdCluster } from "../testkit/system/etcd-side.js";
import { standinKv } from "../testkit/system/kv-side.js";
import { cleanupOwner } from "../testkit/system/owner.js";
import { none, startSystem } from "../testkit/system.js";
import { deployedMemoryEnvironment, withoutExposedGc } from "../testkit/unit-environment.js";
import { type Heartbeat, startHeartbeatFleet } from "./heartbeat-fleet.js";
import { ELECTION_TTL, FLOOR_POOL, POOLS } from "./layout.js";

/** A pusher of the soak, by generation (`soak-a`, `soak-b`, `soak-c`…). */
export interface SoakPusher {
  readonly id: string;
  readonly process: PusherProcess;
  readonly startedAt: number;
}

/** Everything the soak runs. */
export interface World {
  readonly cluster: EtcdCluster;
  /** The driver's client (every member, with the product's fast failover). */
  readonly client: Etcd3;
  /** One client per member, for the oracle and the samplers. */
  readonly members: readonly Etcd3[];
  readonly prefix: string;
  readonly electionKey: string;
  readonly origins: readonly OriginServer[];
  readonly originOf: ReadonlyMap<string, string>;
  readonly kv: KvStandin;
  readonly heartbeats: Heartbeat[];
  readonly pushers: SoakPusher[];
  /**
   * A pusher on the file sink (`KV_SINK=file`): no election and never killed, so the pusher's
   * code runs the whole measured time in one process (the two in the election live 10 minutes
   * at most). Sampled and judged like them.
   */
  readonly snapshot: SoakPusher;
  /** `ETCD_ENDPOINTS` and `ROUTING_PREFIX` for edgectl. */
  readonly edgectlEnv: Record<string, string>;
  /** The pusher's compile settings (the oracle compiles with the same). */
  readonly originTemplate: string;
  /** Starts one more pusher (the next generation id); resolves once it answers /status. */
  startPusher(): Promise<SoakPusher>;
  /** SIGKILLs a heartbeat and starts it again. */
  restartHeartbeat(hb: Heartbeat): Promise<void>;
}

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
    ...extra,
  };
}

/** How the world's services run. */
export interface WorldOptions {
  /** Their units' `NODE_OPTIONS` as deployed (false: without `--expose-gc`, no idle heap trim). */
  readonly heapTrim: boolean;
}

/** The memory settings of a service's unit, with or without the idle heap trim. */
function unitMemory(unit: string, o: WorldOptions): Record<string, string> {
  const env = deployedMemoryEnvironment(ROOT, unit);
  return o.heapTrim ? env : withoutExposedGc(env);
}

/**
 * Starts the cluster, origins, KV stand-in, seeds the world, heartbeats and two pushers, each
 * service with its systemd unit's memory settings (deploy/*.service).
 */
export async function startWorld(
  cleanup: Cleanup,
  log: (line: string) => void,
  o: WorldOptions = { heapTrim: true },
): Promise<World> {
  const id = randomUUID().slice(0, 8);
  const prefix = `/soak-${id}/routing/v1/`;
  const electionKey = `/soak-${id}/leader`;
  const owner = cleanupOwner(cleanup);
  const pushers: SoakPusher[] = [];
  let generation = 0;
  let pusherEnv: Record<string, string> = {};
  let originTemplate = "";
  const startPusher = async (): Promise<SoakPusher> => {
    const pid = `soak-${String.fromCharCode(97 + (generation % 26))}${generation >= 26 ? generation : ""}`;
    generation += 1;
    const startedAt = Date.now();
    const process_ = await startPusherProcess({
      id: pid,
      etcdEndpoint: pusherEnv.ETCD_ENDPOINTS ?? "",
      prefix,
      electionKey,
      electionTtl: ELECTION_TTL,
      outputLimit: 50_000,
      env: {
        ...unitMemory("edge-pusher.service", o),
        NODE_ENV: "production",
        HEARTBEAT_SECONDS: "10",
        ORIGIN_TEMPLATE: originTemplate,
        FLOOR_POOL,
        ...pusherEnv,
      },
    });
    cleanup.add(`pusher ${pid}`, () => process_.stop());
    await process_.ready();
    const p: SoakPusher = { id: pid, process: process_, startedAt };
    pushers.push(p);
    return p;
  };

  const world = await startSystem(owner, {
    prefix,
    etcd: etcdCluster(),
    async origins(s) {
      log(`etcd: 3 members at ${s.etcd.cluster.endpoints.join(", ")}`);
      const origins = await startOrigins(POOLS);
      cleanup.add("origins", () => origins.close());
      originTemplate = origins.get(FLOOR_POOL).url;
      return origins;
    },
    async seed({ etcd, origins }) {
      const client = etcdClient(etcd.cluster.endpoints, 3_000);
      cleanup.add("driver etcd client", () => client.close());
      // Pools and countries; health comes from the heartbeats.
      const puts = [
        ...POOLS.map((p) => [`pool/${p}`, JSON.stringify({ origin: origins.get(p).url })] as const),
        ["country/_default", JSON.stringify({ primary: "p02", fallbacks: [FLOOR_POOL] })] as const,
        ...COUNTRIES.map(
          (cc, i) =>
            [
              `country/${cc}`,
              JSON.stringify({
                primary: POOLS[i % POOLS.length],
                fallbacks: [POOLS[(i + 1) % POOLS.length]],
              }),
            ] as const,
        ),
        ["epoch", "1"] as const,
      ];
      await Promise.all(puts.map(([k, v]) => client.put(`${prefix}${k}`).value(v).exec()));
      return client;
    },
    kv: standinKv({ perKeyWriteLimit: "off" }),
    async pushers(s) {
      pusherEnv = s.pusherEnv();
      const [, , snapshot] = await Promise.all([
        startPusher(),
        startPusher(),
        startSnapshot(s.etcd.endpoint),
      ]);
      return snapshot;
    },
    worker: none,
    async heartbeats({ etcd, origins, seed: client }) {
      const fleet = startHeartbeatFleet(
        {
          client,
          prefix,
          originOf: originUrls(origins),
          env: childEnv({
            ETCD_ENDPOINTS: etcd.endpoint,
            ROUTING_PREFIX: prefix,
            ...unitMemory("edge-heartbeat@.service", o),
          }),
        },
        cleanup,
      );
      await fleet.registered();
      return fleet;
    },
  });

  const { etcd, origins, heartbeats } = world;
  const snapshot = world.pushers;
  const members = etcd.cluster.endpoints.map((hosts) => etcdClient([hosts], 2_000));
  cleanup.add("member etcd clients", () => {
    for (const m of members) m.close();
  });
  log(`heartbeats: ${heartbeats.heartbeats.length} processes for ${POOLS.length} pools`);
  log(`pushers: ${pushers.map((p) => p.id).join(", ")}, and ${snapshot.id} on the file sink`);

  return {
    cluster: etcd.cluster,
    client: world.seed,
    members,
    prefix,
    electionKey,
    origins: origins.all,
    originOf: originUrls(origins),
    kv: world.kv.standin,
    heartbeats: heartbeats.heartbeats,
    pushers,
    snapshot,
    edgectlEnv: { ETCD_ENDPOINTS: etcd.endpoint, ROUTING_PREFIX: prefix },
    originTemplate,
    startPusher,
    restartHeartbeat: (hb) => heartbeats.restart(hb),
  };

  /** The pusher on the file sink (no election, never killed). */
  async function startSnapshot(endpoint: string): Promise<SoakPusher> {
    const dir = mkdtempSync(join(tmpdir(), "edge-soak-snapshot-"));
    cleanup.add("snapshot dir", () => rmSync(dir, { recursive: true, force: true }));
    const startedAt = Date.now();
    const process_ = await startPusherProcess({
      id: "soak-snapshot",
      etcdEndpoint: endpoint,
      prefix,
      electionKey,
      outputLimit: 50_000,
      env: {
        ...deployedMemoryEnvironment(ROOT, "edge-snapshot.service"),
        NODE_ENV: "production",
        ORIGIN_TEMPLATE: originTemplate,
        FLOOR_POOL,
        KV_SINK: "file",
        KV_FILE_DIR: dir,
      },
    });
    cleanup.add("pusher soak-snapshot", () => process_.stop());
    await process_.ready();
    return { id: "soak-snapshot", process: process_, startedAt };
  }
}

/** Each pool's origin URL. */
function originUrls(origins: Origins): ReadonlyMap<string, string> {
  return new Map(POOLS.map((p) => [p, origins.get(p).url]));
}

/** A client on `hosts` with the product's fast failover and a per-call deadline. */
function etcdClient(hosts: readonly string[], deadlineMs: number): Etcd3 {
  return new Etcd3({
    hosts: [...hosts],
    defaultCallOptions: () => ({ deadline: Date.now() + deadlineMs }),
    faultHandling: { host: fastRecoveryBreaker },
  });
}
