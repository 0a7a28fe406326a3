import type { EtcdSide } from "./system/etcd-side.js";
import type { KvSide } from "./system/kv-side.js";
import type { Owner } from "./system/owner.js";

export type { EtcdSide } from "./system/etcd-side.js";
export type { KvSide } from "./system/kv-side.js";
export type { Owner } from "./system/owner.js";

/** One part of the system: started for `owner`, which stops it. */
export type Part<T> = (owner: Owner) => Promise<T>;

/** What the steps after etcd see. */
export interface SystemBase<E extends EtcdSide, O> {
  readonly owner: Owner;
  readonly prefix: string;
  readonly etcd: E;
  readonly origins: O;
}

/** What the steps after the KV side see. */
export interface SystemWithKv<E extends EtcdSide, O, S, K extends KvSide> extends SystemBase<E, O> {
  /** What the seed step resolved to. */
  readonly seed: S;
  readonly kv: K;
  /**
   * A pusher's variables for this system: its etcd, prefix and KV sink (`KV_SINK` and the sink's
   * own), before the caller's.
   */
  pusherEnv(): Record<string, string>;
}

/** The whole system, as {@link startSystem} returns it. */
export interface System<E extends EtcdSide, O, S, K extends KvSide, P, W, H>
  extends SystemWithKv<E, O, S, K> {
  readonly pushers: P;
  readonly worker: W;
  readonly heartbeats: H;
}

/**
 * The parts of one system and how the caller's own steps run. The order is the launcher's:
 * etcd → origins → seed → KV side → pushers → Worker → heartbeats → observer.
 */
export interface SystemPlan<E extends EtcdSide, O, S, K extends KvSide, P, W, H> {
  /** The routing prefix every part uses. */
  readonly prefix: string;
  /** `singleEtcd()` or `etcdCluster()` (testkit/system/etcd-side.ts), or the caller's own. */
  readonly etcd: Part<E>;
  /** The origins the seed names (started before it). */
  readonly origins: (s: SystemBase<E, undefined>) => Promise<O>;
  /** Writes the routing intent; what it resolves to (a revision, a client) the later steps see. */
  readonly seed: (s: SystemBase<E, O>) => Promise<S>;
  /** `localKv(…)` or `standinKv(…)` (testkit/system/kv-side.ts). */
  readonly kv: Part<K>;
  readonly pushers: (s: SystemWithKv<E, O, S, K>) => Promise<P>;
  readonly worker: (s: SystemWithKv<E, O, S, K> & { readonly pushers: P }) => Promise<W>;
  readonly heartbeats: (
    s: SystemWithKv<E, O, S, K> & { readonly pushers: P; readonly worker: W },
  ) => Promise<H>;
  /** Last: what watches the running system (the viewer observer), once the rest answers. */
  readonly observer?: (s: System<E, O, S, K, P, W, H>) => Promise<void>;
}

/** A step a caller leaves out. */
export const none = async (): Promise<undefined> => undefined;

/**
 * Starts the system in the launcher's order; `owner` stops every part (the caller runs its
 * teardown, also when a step throws).
 */
export async function startSystem<E extends EtcdSide, O, S, K extends KvSide, P, W, H>(
  owner: Owner,
  plan: SystemPlan<E, O, S, K, P, W, H>,
): Promise<System<E, O, S, K, P, W, H>> {
  const { prefix } = plan;
  const etcd = await plan.etcd(owner);
  const origins = await plan.origins({ owner, prefix, etcd, origins: undefined });
  const base: SystemBase<E, O> = { owner, prefix, etcd, origins };
  const seed = await plan.seed(base);
  const kv = await plan.kv(owner);
  const withKv: SystemWithKv<E, O, S, K> = {
    ...base,
    seed,
    kv,
    pusherEnv: () => ({ ETCD_ENDPOINTS: etcd.endpoint, ROUTING_PREFIX: prefix, ...kv.sinkEnv }),
  };
  const pushers = await plan.pushers(withKv);
  const worker = await plan.worker({ ...withKv, pushers });
  const heartbeats = await plan.heartbeats({ ...withKv, pushers, worker });
  const system: System<E, O, S, K, P, W, H> = { ...withKv, pushers, worker, heartbeats };
  await plan.observer?.(system);
  return system;
}
