import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Etcd3 } from "etcd3";
import type { Miniflare } from "miniflare";
import { localPersistRoot } from "../adapters/kv/kv-settings.js";
import { type EtcdServer, startEtcd } from "./etcd.js";
import { type MediaOrigin, startMediaOrigins } from "./media-origins.js";
import { newMiniflare } from "./miniflare.js";
import { type OwnedProcess, runOwned, spawnOwned } from "./owned-process.js";
import { freePort } from "./ports.js";
import { type PusherProcess, ROOT, startPusherProcess } from "./pusher-process.js";
import { steerMedia } from "./steer-media.js";
import { PLAYER_PAGES } from "./steer-players.js";
import { bundleWorker, compatibilityDate } from "./worker.js";

/** The ROUTING namespace id in wrangler.toml, which the pusher's local sink defaults to. */
const NAMESPACE_ID = "00000000000000000000000000000000";

/** The steering world's pools and their regions: three inside the `eu` fence, use-1 outside. */
export const STEER_STACK_POOLS = {
  "fra-1": "eu-central",
  "ams-1": "eu-west",
  "par-1": "eu-west",
  "use-1": "us-east",
} as const;

/** The country whose viewers the players are (fenced to `eu`: fra-1 > ams-1 > par-1). */
export const STEER_COUNTRY = "DE";

/** Options for {@link startSteerStack}. */
export interface SteerStackOptions {
  /** `STEER_TTL_SECONDS`. */
  readonly ttlS: number;
  /** The Worker's `DEBUG_TOKEN` (the players send it to be a viewer of {@link STEER_COUNTRY}). */
  readonly debugToken: string;
  /** Seconds of the test streams. */
  readonly mediaSeconds: number;
  /** `edgectl heartbeat --ttl`; default 3. */
  readonly heartbeatTtlS?: number;
}

/** The result of one `edgectl` run. */
export interface SteerCtlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The whole control plane under real players: etcd holding the steering world, one media
 * origin per pool, `edgectl heartbeat --check-url` on each origin's `/healthz`, the real pusher
 * (dist/, local KV sink) and the Worker in workerd reading that KV on a loopback port.
 */
export interface SteerStack {
  /** The Worker's URL (`http://127.0.0.1:PORT`). */
  readonly edgeUrl: string;
  readonly origins: readonly MediaOrigin[];
  origin(pool: string): MediaOrigin;
  /** `edgectl ARGS` against this stack's etcd and prefix. */
  edgectl(...args: string[]): Promise<SteerCtlResult>;
  /** Waits until the Worker routes {@link STEER_COUNTRY} to `pool` first. */
  routedTo(pool: string, timeoutMs?: number): Promise<void>;
  /** The children's output so far (for failure messages). */
  logs(): string;
  stop(): Promise<void>;
}

/** Starts the stack with every pool healthy; the caller must `stop()` it. */
export async function startSteerStack(o: SteerStackOptions): Promise<SteerStack> {
  const dir = mkdtempSync(join(tmpdir(), "edge-steer-stack-"));
  const persistDir = join(dir, "state");
  const prefix = `/steer/${Math.random().toString(36).slice(2, 8)}/`;
  const output: string[] = [];
  const keep = (t: string) => {
    output.push(t);
    if (output.length > 2_000) output.splice(0, 500);
  };
  const heartbeats: OwnedProcess[] = [];
  let etcd: EtcdServer | undefined;
  let client: Etcd3 | undefined;
  let origins: MediaOrigin[] = [];
  let pusher: PusherProcess | undefined;
  let mf: Miniflare | undefined;
  const stop = async () => {
    await mf?.dispose().catch(() => {});
    await pusher?.stop().catch(() => {});
    await Promise.all(heartbeats.map((h) => h.stop(2_000).catch(() => {})));
    await Promise.all(origins.map((x) => x.kill()));
    client?.close();
    await etcd?.stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    etcd = await startEtcd();
    client = new Etcd3({ hosts: etcd.endpoint });
    origins = await startMediaOrigins(
      Object.keys(STEER_STACK_POOLS),
      await steerMedia(o.mediaSeconds),
      PLAYER_PAGES,
    );
    const origin = (pool: string) => {
      const x = origins.find((m) => m.name === pool);
      if (!x) throw new Error(`no media origin ${pool}`);
      return x;
    };
    const put = (k: string, v: unknown) => client?.put(`${prefix}${k}`).value(JSON.stringify(v));
    for (const [pool, region] of Object.entries(STEER_STACK_POOLS))
      await put(`pool/${pool}`, { origin: origin(pool).url, region });
    await put("fence/eu", {
      continents: ["EU"],
      regions: ["eu-central", "eu-west"],
      floor: "par-1",
    });
    await put("country/_default", { primary: "use-1", fallbacks: ["par-1"] });
    await put(`country/${STEER_COUNTRY}`, { primary: "fra-1", fallbacks: ["ams-1", "par-1"] });
    await client.put(`${prefix}epoch`).value("1");

    const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      ETCD_ENDPOINTS: etcd?.endpoint ?? "",
      ROUTING_PREFIX: prefix,
      KV_LOCAL_PERSIST: persistDir,
      NO_COLOR: "1",
      ...extra,
    });
    const edgectlBin = join(ROOT, "bin/edgectl.js");
    for (const pool of Object.keys(STEER_STACK_POOLS)) {
      const args = [edgectlBin, "heartbeat", pool, "--ttl", String(o.heartbeatTtlS ?? 3)];
      args.push("--interval", "0.5", "--check-url", `${origin(pool).url}/healthz`);
      heartbeats.push(
        spawnOwned(`heartbeat ${pool}`, process.execPath, args, {
          env: env(),
          cwd: ROOT,
          onOutput: keep,
          outputLimit: 20_000,
        }),
      );
    }
    pusher = await startPusherProcess({
      etcdEndpoint: etcd.endpoint,
      prefix,
      electionKey: `/leaders${prefix}pusher`,
      electionTtl: 3,
      env: { KV_SINK: "local", KV_LOCAL_PERSIST: persistDir, FLOOR_POOL: "use-1" },
      onOutput: keep,
    });
    await pusher.ready(60_000);

    const [script, date] = await Promise.all([bundleWorker(), compatibilityDate()]);
    const port = await freePort();
    const edgeUrl = `http://127.0.0.1:${port}`;
    mf = newMiniflare({
      modules: true,
      script,
      compatibilityDate: date,
      resourcePersistencePath: localPersistRoot(persistDir),
      kvNamespaces: { ROUTING: NAMESPACE_ID },
      bindings: {
        STEER: "on",
        STEER_TTL_SECONDS: String(o.ttlS),
        DEBUG_TOKEN: o.debugToken,
        FLOOR_POOL: "use-1",
        ISOLATE_CACHE_SECONDS: "1",
        EDGE_EJECT_AFTER: "1",
        EDGE_EJECT_SECONDS: "300",
        ORIGIN_HEDGE_MS: "100000",
      },
      cf: false,
      host: "127.0.0.1",
      port,
    });
    await mf.ready;

    const routedTo = async (pool: string, timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs;
      let last = "";
      while (Date.now() < deadline) {
        const res = await fetch(`${edgeUrl}/__edge/route`, {
          headers: { "X-Edge-Debug-Token": o.debugToken, "X-Edge-Debug-Country": STEER_COUNTRY },
        }).catch(() => null);
        last = res ? await res.text() : "no answer";
        if (res?.ok && (JSON.parse(last) as { route: { pool: string } }).route.pool === pool)
          return;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error(`${STEER_COUNTRY} not routed to ${pool} within ${timeoutMs} ms: ${last}`);
    };
    const edgectl = async (...args: string[]) => {
      const r = await runOwned("edgectl", process.execPath, [edgectlBin, ...args], {
        env: env(),
        cwd: ROOT,
      });
      return { code: r.code, stdout: r.stdout, stderr: r.stderr };
    };
    return {
      edgeUrl,
      origins,
      origin,
      edgectl,
      routedTo,
      logs: () => output.join("").slice(-6_000),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
