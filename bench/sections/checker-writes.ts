import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Etcd3 } from "etcd3";
import { startEtcd } from "../../testkit/etcd.js";
import { startOrigins } from "../../testkit/origins.js";
import type { Cleanup } from "../lib/cleanup.js";
import { round } from "../lib/stats.js";
import { type TimerFloor, timerFloor } from "../lib/timer-floor.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** `health.etcd_writes_per_checker_hour` and how it was measured, in results.json. */
export interface CheckerWritesResult {
  /** Writes after the registration, scaled to one hour; the goal is 0. */
  readonly etcd_writes_per_checker_hour: number;
  /** Writes of the key in the run, the registration included. */
  readonly writes: number;
  readonly seconds: number;
  /** Probes the check URL answered during the run. */
  readonly probes: number;
  readonly interval_s: number;
  /** The origin's time to first byte, and the p90 the key held at the end. */
  readonly origin_delay_ms: number;
  readonly p90_ms: number | null;
  /** Each rewrite after the registration, as the checker logged it: the figure it moved from and to. */
  readonly rewrites: readonly { readonly from_ms: number | null; readonly to_ms: number }[];
  /** Each status change the checker logged (`unhealthy: check failing`…): a write each. */
  readonly status_changes: readonly string[];
  /**
   * The same rule applied to a steady 300 ms timer in the bench process over the same run: what
   * the host's scheduling alone moves (`bench/lib/timer-floor.ts`).
   */
  readonly timer_floor: TimerFloor;
}

/** Options of {@link checkerWrites}. */
export interface CheckerWritesOptions {
  readonly seconds: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

const DELAY_MS = 300;
const INTERVAL_S = 0.5;

/**
 * A real `edgectl heartbeat POOL --checker NAME --check-url URL` (the built bin, its own process)
 * against a real etcd and a loopback origin answering after a steady 300 ms: the key's writes
 * (etcd's `version` of it) over `seconds`, scaled to an hour after the registration's.
 */
export async function checkerWrites(o: CheckerWritesOptions): Promise<CheckerWritesResult> {
  const [etcd, origins] = await Promise.all([startEtcd(), startOrigins(["steady-1"])]);
  o.cleanup.add("etcd (checker writes)", () => etcd.stop());
  o.cleanup.add("origin (checker writes)", () => origins.close());
  const origin = origins.get("steady-1");
  origin.respond(() => ({ status: 200, delayMs: DELAY_MS }));
  const client = new Etcd3({ hosts: etcd.endpoint });
  o.cleanup.add("etcd client (checker writes)", () => client.close());
  const prefix = "/bench/checker-writes/";
  const key = `${prefix}health/steady-1/bench-a`;
  const argv = ["heartbeat", "steady-1", "--checker", "bench-a", "--interval", String(INTERVAL_S)];
  const child = spawn(
    process.execPath,
    [`${ROOT}bin/edgectl.js`, ...argv, "--check-url", `${origin.url}/healthz`],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        ETCD_ENDPOINTS: etcd.endpoint,
        ROUTING_PREFIX: prefix,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const rewrites: { from_ms: number | null; to_ms: number }[] = [];
  const statusChanges: string[] = [];
  child.stdout.setEncoding("utf8");
  let pending = "";
  child.stdout.on("data", (chunk: string) => {
    const lines = (pending + chunk).split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      const e = parseEvent(line);
      if (e?.event === "p90-changed" && typeof e.p90_ms === "number") {
        const from = Number(/^was (\d+)$/.exec(e.detail ?? "")?.[1]);
        rewrites.push({ from_ms: Number.isFinite(from) ? from : null, to_ms: e.p90_ms });
      }
      if (e?.event === "status-changed") statusChanges.push(`${e.status}: ${e.detail ?? ""}`);
    }
  });
  child.stderr.resume();
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  o.cleanup.add(`heartbeat ${child.pid}`, async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
  });
  const deadline = Date.now() + 30_000;
  while ((await client.get(key).string()) === null) {
    if (Date.now() > deadline) throw new Error("checker writes: the heartbeat never registered");
    await sleep(50);
  }
  const fromHits = origin.hits;
  const stopFloor = new AbortController();
  const floor = timerFloor(DELAY_MS, INTERVAL_S * 1000, stopFloor.signal);
  await sleep(o.seconds * 1000);
  stopFloor.abort();
  const kv = (await client.get(key).exec()).kvs[0];
  const probes = origin.hits - fromHits;
  child.kill("SIGTERM");
  await exited;
  if (!kv) throw new Error("checker writes: the key went away during the run");
  const writes = Number(kv.version);
  const p90 = (JSON.parse(kv.value.toString()) as { p90_ms?: number }).p90_ms ?? null;
  const moves = rewrites.map((w) => `${w.from_ms ?? "-"}→${w.to_ms}`).join(", ");
  const timers = await floor;
  o.log(
    `  checker writes: ${writes} write(s) in ${o.seconds} s, ${probes} probes, p90 ${p90} ms${moves ? ` (rewrites ${moves})` : ""}${statusChanges.length ? ` (status ${statusChanges.join(", ")})` : ""}; host timer floor: lateness p90 ${timers.lateness_p90_ms} ms, ${timers.rewrites} rewrite(s) of a steady ${DELAY_MS} ms timer`,
  );
  return {
    etcd_writes_per_checker_hour: round(((writes - 1) * 3600) / o.seconds, 1),
    writes,
    seconds: o.seconds,
    probes,
    interval_s: INTERVAL_S,
    origin_delay_ms: DELAY_MS,
    p90_ms: p90,
    rewrites,
    status_changes: statusChanges,
    timer_floor: timers,
  };
}

/** One JSON log line of the checker, or null for anything else. */
function parseEvent(line: string): {
  readonly event?: string;
  readonly status?: string;
  readonly p90_ms?: number;
  readonly detail?: string;
} | null {
  try {
    const v: unknown = JSON.parse(line);
    return v !== null && typeof v === "object" ? (v as { event?: string }) : null;
  } catch {
    return null;
  }
}
