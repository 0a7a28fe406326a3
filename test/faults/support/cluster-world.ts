import { Etcd3 } from "etcd3";
import { fastRecoveryBreaker } from "../../../adapters/etcd-fault-handling.js";
import type { CompiledMap } from "../../../core/index.js";
import { type EtcdCluster, startEtcdCluster } from "../../helpers/etcd-cluster.js";
import type { FaultContext } from "../scenario.js";
import { expectedMap } from "./etcd-world.js";
import { sleep } from "./processes.js";

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
