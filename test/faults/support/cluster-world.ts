import { setTimeout as sleep } from "node:timers/promises";
import { Etcd3 } from "etcd3";
import { fastRecoveryBreaker } from "../../../adapters/etcd-fault-handling.js";
import type { CompiledMap } from "../../../core/index.js";
import { type EtcdCluster, startEtcdCluster } from "../../../testkit/etcd-cluster.js";
import { expectedMap, waitConverged } from "../../../testkit/map-oracle.js";
import type { PusherProcess } from "../../../testkit/pusher-process.js";
import type { FaultContext } from "../scenario.js";
import { names, seedWorld } from "./etcd-world.js";
import { type RecordedKv, startRecordedKv } from "./kv-recorder.js";
import { startScenarioPusher } from "./pusher-process.js";

/** Starts a 3-member etcd cluster on loopback, stopped with the scenario. */
export async function scenarioCluster(ctx: FaultContext): Promise<EtcdCluster> {
  const cluster = await startEtcdCluster();
  ctx.defer(() => cluster.stop());
  return cluster;
}

/**
 * The scenario's own access to a cluster: one etcd3 client per member, so the oracle picks the
 * member itself (a live one that answers) and never depends on the product's failover.
 */
export interface MemberClients {
  readonly clients: readonly Etcd3[];
  /**
   * Runs `fn` against each running member in turn (except those in `avoid`) until one answers;
   * throws after `timeoutMs`.
   */
  any<T>(
    fn: (client: Etcd3, member: number) => Promise<T>,
    timeoutMs?: number,
    avoid?: ReadonlySet<number>,
  ): Promise<T>;
}

/** One client per member (2 s deadline per call), closed with the scenario. */
export function memberClients(ctx: FaultContext, cluster: EtcdCluster): MemberClients {
  const clients = cluster.endpoints.map(
    (endpoint) =>
      new Etcd3({
        hosts: endpoint,
        defaultCallOptions: () => ({ deadline: Date.now() + 2_000 }),
        faultHandling: { host: fastRecoveryBreaker },
        grpcOptions: {
          "grpc.initial_reconnect_backoff_ms": 100,
          "grpc.max_reconnect_backoff_ms": 1_000,
        },
      }),
  );
  ctx.defer(() => {
    for (const c of clients) c.close();
  });
  let next = 0;
  return {
    clients,
    async any(fn, timeoutMs = 20_000, avoid = new Set<number>()) {
      const deadline = Date.now() + timeoutMs;
      let last: unknown;
      while (Date.now() < deadline) {
        for (let k = 0; k < clients.length; k++) {
          const i = (next + k) % clients.length;
          const client = clients[i];
          if (!client || !cluster.members[i]?.running || avoid.has(i)) continue;
          try {
            const out = await fn(client, i);
            next = i;
            return out;
          } catch (e) {
            last = e;
          }
        }
        next = (next + 1) % clients.length;
        await sleep(200);
      }
      throw new Error(
        `no etcd member answered in ${timeoutMs} ms: ${last instanceof Error ? last.message : String(last)}`,
      );
    },
  };
}

/** `compile(range read of etcd)` through whichever member answers. */
export function expectedMapOf(mc: MemberClients, prefix: string): Promise<CompiledMap> {
  return mc.any((c) => expectedMap(c, prefix));
}

/** A seeded cluster scenario's world: the cluster, its member clients, names and edgectl env. */
export interface SeededCluster {
  readonly tag: string;
  readonly cluster: EtcdCluster;
  readonly mc: MemberClients;
  readonly prefix: string;
  readonly electionKey: string;
  /** `ETCD_ENDPOINTS` (every member) and `ROUTING_PREFIX`, for edgectl runs. */
  readonly env: { ETCD_ENDPOINTS: string; ROUTING_PREFIX: string };
}

/** A 3-member cluster with the 10-country seed world under a prefix named for `tag`. */
export async function seededCluster(ctx: FaultContext, tag: string): Promise<SeededCluster> {
  const cluster = await scenarioCluster(ctx);
  const mc = memberClients(ctx, cluster);
  const { prefix, electionKey } = names(tag);
  await mc.any((c) => seedWorld(c, prefix, 10));
  const env = { ETCD_ENDPOINTS: cluster.endpoints.join(","), ROUTING_PREFIX: prefix };
  return { tag, cluster, mc, prefix, electionKey, env };
}

/**
 * A recorded KV and one ready pusher (`{tag}-1`, election TTL 5 s) on the world's prefix, over
 * `etcdEndpoint` (default: every member).
 */
export async function startClusterPusher(
  ctx: FaultContext,
  world: SeededCluster,
  etcdEndpoint = world.env.ETCD_ENDPOINTS,
): Promise<{ kv: RecordedKv; pusher: PusherProcess }> {
  const kv = await startRecordedKv(ctx);
  const pusher = await startScenarioPusher(ctx, {
    id: `${world.tag}-1`,
    etcdEndpoint,
    prefix: world.prefix,
    electionKey: world.electionKey,
    electionTtl: 5,
    kvEnv: kv.env(),
  });
  await pusher.ready();
  return { kv, pusher };
}

/** Waits (30 s at most) until KV holds `compile(etcd)`; throws if the seed state never arrives. */
export async function waitSeedPushed(kv: RecordedKv, world: SeededCluster): Promise<void> {
  const expected = await expectedMapOf(world.mc, world.prefix);
  if ((await waitConverged(() => kv.routes(), expected, 30_000)) === null)
    throw new Error("the pusher never pushed the seed state");
}
