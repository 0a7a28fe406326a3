import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Etcd3 } from "etcd3";
import { fastRecoveryBreaker } from "../adapters/etcd-fault-handling.js";
import type { Cleanup } from "../bench/lib/cleanup.js";
import { type EtcdCluster, startEtcdCluster } from "../testkit/etcd-cluster.js";
import { type KvStandin, startKvStandin } from "../testkit/kv-standin.js";
import { type OriginServer, startOrigins } from "../testkit/origins.js";
import { type PusherProcess, ROOT, startPusherProcess } from "../testkit/pusher-process.js";
import { COUNTRIES } from "../testkit/sample-countries.js";
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
  const cluster = await startEtcdCluster();
  cleanup.add("etcd cluster", () => cluster.stop());
  log(`etcd: 3 members at ${cluster.endpoints.join(", ")}`);
  const endpoints = cluster.endpoints.join(",");
  const client = new Etcd3({
    hosts: [...cluster.endpoints],
    defaultCallOptions: () => ({ deadline: Date.now() + 3_000 }),
    faultHandling: { host: fastRecoveryBreaker },
  });
  cleanup.add("driver etcd client", () => client.close());
  const members = cluster.endpoints.map(
    (hosts) =>
      new Etcd3({
        hosts,
        defaultCallOptions: () => ({ deadline: Date.now() + 2_000 }),
        faultHandling: { host: fastRecoveryBreaker },
      }),
  );
  cleanup.add("member etcd clients", () => {
    for (const m of members) m.close();
  });

  const origins = await startOrigins(POOLS);
  cleanup.add("origins", () => origins.close());
  const originOf = new Map(POOLS.map((p) => [p, origins.get(p).url]));
  const originTemplate = originOf.get(FLOOR_POOL) as string;

  const kv = await startKvStandin({ perKeyWriteLimit: "off" });
  cleanup.add("kv stand-in", () => kv.close());

  // Pools and countries; health comes from the heartbeats.
  const puts = [
    ...POOLS.map((p) => [`pool/${p}`, JSON.stringify({ origin: originOf.get(p) })] as const),
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

  const edgectlEnv = { ETCD_ENDPOINTS: endpoints, ROUTING_PREFIX: prefix };
  const fleet = startHeartbeatFleet(
    {
      client,
      prefix,
      originOf,
      env: childEnv({ ...edgectlEnv, ...unitMemory("edge-heartbeat@.service", o) }),
    },
    cleanup,
  );
  const { heartbeats } = fleet;

  const pushers: SoakPusher[] = [];
  let generation = 0;
  const startPusher = async (): Promise<SoakPusher> => {
    const pid = `soak-${String.fromCharCode(97 + (generation % 26))}${generation >= 26 ? generation : ""}`;
    generation += 1;
    const startedAt = Date.now();
    const process_ = await startPusherProcess({
      id: pid,
      etcdEndpoint: endpoints,
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
        KV_SINK: "cloudflare",
        CF_ACCOUNT_ID: kv.accountId,
        CF_API_TOKEN: kv.token,
        CF_API_BASE_URL: kv.url,
        KV_NAMESPACE_ID: kv.namespaceId,
      },
    });
    cleanup.add(`pusher ${pid}`, () => process_.stop());
    await process_.ready();
    const p: SoakPusher = { id: pid, process: process_, startedAt };
    pushers.push(p);
    return p;
  };
  const startSnapshot = async (): Promise<SoakPusher> => {
    const dir = mkdtempSync(join(tmpdir(), "edge-soak-snapshot-"));
    cleanup.add("snapshot dir", () => rmSync(dir, { recursive: true, force: true }));
    const startedAt = Date.now();
    const process_ = await startPusherProcess({
      id: "soak-snapshot",
      etcdEndpoint: endpoints,
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
  };
  // The pushers start while the heartbeats register (what they compile meanwhile is theirs).
  const [, , snapshot] = await Promise.all([
    startPusher(),
    startPusher(),
    startSnapshot(),
    fleet.registered(),
  ]);
  log(`heartbeats: ${heartbeats.length} processes for ${POOLS.length} pools`);
  log(`pushers: ${pushers.map((p) => p.id).join(", ")}, and ${snapshot.id} on the file sink`);

  return {
    cluster,
    client,
    members,
    prefix,
    electionKey,
    origins: origins.all,
    originOf,
    kv,
    heartbeats,
    pushers,
    snapshot,
    edgectlEnv,
    originTemplate,
    startPusher,
    restartHeartbeat: (hb) => fleet.restart(hb),
  };
}
