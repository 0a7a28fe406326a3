import { Etcd3 } from "etcd3";
import type { DesiredState } from "../../core/index.js";
import { localKv } from "../../testkit/system/kv-side.js";
import { startSystem } from "../../testkit/system.js";
import {
  type EdgeSettings,
  edgectlSpec,
  heartbeatSpec,
  observerSpec,
  originSpec,
  pusherSpec,
  workerSpec,
  writeWorkerSecrets,
} from "./components.js";
import type { StackConfig } from "./config.js";
import { describeStackEtcd, ensureEtcd, etcdHealthy } from "./etcd.js";
import { freePort } from "./free-port.js";
import type { PrefixedOutput } from "./output.js";
import { checkPorts } from "./preflight.js";
import { countPrefix, type LocalPool, localPools, readSeed } from "./seed.js";
import { type Managed, Supervisor } from "./supervisor.js";
import { probe, waitFor } from "./wait.js";

/** What `start()` found once everything answered. */
export interface StackReady {
  readonly etcdEndpoint: string;
  readonly etcdReused: boolean;
  readonly seeded: boolean;
  readonly revision: number;
  readonly pools: readonly LocalPool[];
  readonly edge: EdgeSettings;
  readonly elapsedMs: number;
}

/** Thrown when a component exits before or during startup. */
export class ComponentExitError extends Error {
  override readonly name = "ComponentExitError";
}

/** Floor pool and origin template derived from the seed, so pusher and Worker agree. */
export function edgeSettings(seed: DesiredState, floorPool: string): EdgeSettings {
  const floor = seed.pools[floorPool];
  return { floorPool, originTemplate: floor?.origin ?? "http://127.0.0.1:9103" };
}

/**
 * The local stack: etcd (started or reused), the seed config, demo origins with heartbeats,
 * the pusher with the local KV sink and the Worker under `wrangler dev`.
 */
export class LocalStack {
  readonly supervisor: Supervisor;
  private readonly abort = new AbortController();
  private failure: { name: string; detail: string } | undefined;
  private failureListener: ((name: string, detail: string) => void) | undefined;

  constructor(
    private readonly cfg: StackConfig,
    private readonly out: PrefixedOutput,
    private readonly floorPool = "par-1",
  ) {
    this.supervisor = new Supervisor(out, (m, info, spec) =>
      this.componentDied(m, info.code, info.signal, spec.expendable === true),
    );
  }

  /** Called once when a component dies on its own (after or during startup). */
  onFailure(listener: (name: string, detail: string) => void): void {
    this.failureListener = listener;
    if (this.failure) listener(this.failure.name, this.failure.detail);
  }

  /** Expendable components that died while the stack kept running. */
  readonly lost: string[] = [];

  private componentDied(
    m: Managed,
    code: number | null,
    signal: NodeJS.Signals | null,
    expendable: boolean,
  ): void {
    if (this.failure) return;
    const detail = signal ? `killed by ${signal}` : `exited with code ${code}`;
    if (expendable) {
      this.lost.push(m.name);
      this.out.notice(
        `${m.name} ${detail}; its lease lapses within the TTL and the edge drains the pool. The stack keeps running (it will exit 1).`,
        "warn",
      );
      return;
    }
    this.failure = { name: m.name, detail };
    this.abort.abort(new ComponentExitError(`${m.name} ${detail}`));
    this.failureListener?.(m.name, detail);
  }

  private readonly t0 = Date.now();

  private step(text: string): void {
    this.out.notice(`+${((Date.now() - this.t0) / 1000).toFixed(1)}s ${text}`);
  }

  /** Starts every component and resolves once the edge answers with a pushed revision. */
  async start(): Promise<StackReady> {
    const { cfg, supervisor: sup } = this;
    const signal = this.abort.signal;
    const seed = readSeed(cfg.seedFile);
    const pools = localPools(seed);
    const edge = edgeSettings(seed, this.floorPool);

    this.step(`etcd: checking 127.0.0.1:${cfg.etcdPort}…`);
    // A reused etcd legitimately holds its ports; everything else must be free before we start.
    const etcdUp = await etcdHealthy(`http://127.0.0.1:${cfg.etcdPort}`);
    await checkPorts([
      ...(etcdUp
        ? []
        : [
            { what: "etcd", port: cfg.etcdPort, setting: "EDGE_STACK_ETCD_PORT" },
            { what: "etcd peer", port: cfg.etcdPeerPort, setting: "EDGE_STACK_ETCD_PEER_PORT" },
          ]),
      { what: "worker", port: cfg.workerPort, setting: "EDGE_STACK_WORKER_PORT" },
      { what: "pusher", port: cfg.pusherPort, setting: "EDGE_STACK_PUSHER_PORT" },
      { what: "observer", port: cfg.observerPort, setting: "EDGE_STACK_OBSERVER_PORT" },
      ...pools.map((p) => ({
        what: `origin ${p.pool}`,
        port: p.port,
        setting: `the origin in ${cfg.seedFile}`,
      })),
    ]);
    let revision = 0;
    const pusherUrl = `http://127.0.0.1:${cfg.pusherPort}`;
    const system = await startSystem(sup, {
      prefix: cfg.prefix,
      etcd: async (owner) => {
        const etcd = await ensureEtcd(cfg, owner, signal);
        this.step(
          etcd.reused
            ? `etcd: reusing the etcd already running at ${etcd.endpoint} (it stays up on exit)`
            : `etcd: started at ${etcd.endpoint}, data in ${cfg.etcdDataDir}`,
        );
        this.step(describeStackEtcd(etcd, cfg.root));
        return etcd;
      },
      origins: async () => {
        this.step(`origins: starting ${pools.map((p) => `${p.pool}:${p.port}`).join(", ")}…`);
        for (const p of pools) sup.spawn(originSpec(cfg, p));
        await Promise.all(
          pools.map((p) =>
            waitFor(async () => ((await probe(`${p.origin}/healthz`))?.ok ? true : undefined), {
              what: `origin ${p.pool}`,
              timeoutMs: 60_000,
              signal,
            }),
          ),
        );
      },
      seed: ({ etcd }) => this.seed(etcd.endpoint),
      kv: localKv({ persistDir: cfg.persistDir }),
      // The pusher compiles whatever is there and follows every change, so it need not wait for
      // the heartbeats; readiness below waits for a map at least as new as their registration.
      pushers: async (s) => {
        this.step(`pusher: starting (local KV in ${cfg.persistDir})…`);
        sup.spawn(pusherSpec(cfg, s.pusherEnv(), edge));
        // The pusher listens only once its KV sink is open. Two workerd processes creating the
        // same persisted KV database at once can fail with SQLITE_BUSY, so wrangler dev starts
        // after that.
        await waitFor(async () => ((await probe(`${pusherUrl}/healthz`)) ? true : undefined), {
          what: "pusher listening",
          timeoutMs: 90_000,
          signal,
        });
      },
      // wrangler takes longest (bundling, workerd start): start it now, check it at the end.
      worker: async () => {
        this.step(`worker: starting wrangler dev on http://127.0.0.1:${cfg.workerPort}…`);
        const inspector = cfg.inspectorPort || (await freePort());
        writeWorkerSecrets(cfg);
        sup.spawn(workerSpec(cfg, edge, inspector));
      },
      heartbeats: async ({ etcd }) => {
        this.step(`heartbeats: registering ${pools.map((p) => p.pool).join(", ")}…`);
        for (const p of pools) sup.spawn(heartbeatSpec(cfg, etcd.endpoint, p));
        return this.waitHealthKeys(etcd.endpoint, pools, signal);
      },
      observer: async ({ etcd, heartbeats: healthRev }) => {
        revision = await this.waitEdge(healthRev, signal);
        this.step(`observer: polling the edge's observations (/metrics on :${cfg.observerPort})…`);
        sup.spawn(observerSpec(cfg, etcd.endpoint));
      },
    });
    return {
      etcdEndpoint: system.etcd.endpoint,
      etcdReused: system.etcd.reused,
      seeded: system.seed,
      revision,
      pools,
      edge,
      elapsedMs: Date.now() - this.t0,
    };
  }

  /** Applies the seed file when the prefix holds no routing intent; whether it did. */
  private async seed(endpoint: string): Promise<boolean> {
    const { cfg } = this;
    const intent =
      (await countPrefix(endpoint, `${cfg.prefix}pool/`)) +
      (await countPrefix(endpoint, `${cfg.prefix}country/`));
    if (intent > 0) {
      this.step(
        `seed: ${cfg.prefix} already holds ${intent} intent keys; leaving them as they are`,
      );
      return false;
    }
    this.step(`seed: ${cfg.prefix} holds no routing intent; applying ${cfg.seedFile}…`);
    const apply = this.supervisor.spawn({
      ...edgectlSpec(cfg, endpoint, "edgectl", ["apply", cfg.seedFile, "--yes"]),
      oneShot: true,
    });
    const info = await apply.exited;
    if (info.code !== 0) {
      throw new ComponentExitError(`edgectl apply ${cfg.seedFile} exited with ${info.code}`);
    }
    return true;
  }

  /**
   * Waits until KV holds the pools' registration (`healthRev`) and the Worker serves that map;
   * resolves to the revision it serves.
   */
  private async waitEdge(healthRev: number, signal: AbortSignal): Promise<number> {
    const { cfg } = this;
    this.step("pusher: waiting for KV to hold the pools' registration…");
    // `meta` confirms the registration's revision; the Worker serves `routes`, whose revision is
    // where routing last changed, which may be older than the registration.
    const routesRev = await waitFor(
      async () => {
        const res = await probe(`http://127.0.0.1:${cfg.pusherPort}/status`);
        if (!res?.ok) return undefined;
        const s = (await res.json()) as { pushed_revision?: unknown; routes_revision?: unknown };
        return typeof s.pushed_revision === "number" &&
          s.pushed_revision >= healthRev &&
          typeof s.routes_revision === "number"
          ? s.routes_revision
          : undefined;
      },
      { what: "pusher /status", timeoutMs: 90_000, signal },
    );
    this.step("worker: waiting for /__edge/health to report that map…");
    return waitFor(
      async () => {
        const res = await probe(`http://127.0.0.1:${cfg.workerPort}/__edge/health`);
        if (!res?.ok) return undefined;
        const body = (await res.json()) as { rev?: unknown };
        return typeof body.rev === "number" && body.rev >= routesRev ? body.rev : undefined;
      },
      { what: "worker /__edge/health", timeoutMs: cfg.readyTimeoutMs, intervalMs: 300, signal },
    );
  }

  private async waitHealthKeys(
    endpoint: string,
    pools: readonly LocalPool[],
    signal: AbortSignal,
  ): Promise<number> {
    const client = new Etcd3({ hosts: [endpoint] });
    const healthPrefix = `${this.cfg.prefix}health/`;
    try {
      // The revision at which every pool had registered (the newest health key's): a change
      // under the prefix, so the pusher's `meta` reaches it.
      return await waitFor(
        async () => {
          const res = await client.getAll().prefix(healthPrefix).exec();
          const have = new Set(res.kvs.map((kv) => kv.key.toString().slice(healthPrefix.length)));
          if (!pools.every((p) => have.has(p.pool))) return undefined;
          return Math.max(...res.kvs.map((kv) => Number(kv.mod_revision)));
        },
        { what: "heartbeats (health/ keys)", timeoutMs: 60_000, signal },
      );
    } finally {
      client.close();
    }
  }

  /** Stops everything this stack started (a reused etcd is left alone). */
  async stop(): Promise<void> {
    if (!this.abort.signal.aborted) this.abort.abort(new Error("stopping"));
    await this.supervisor.stopAll();
  }
}
