import { randomBytes } from "node:crypto";
import { type CompiledMap, type MapMeta, parseMap } from "../../../core/index.js";
import {
  type KvStandin,
  type KvStandinOptions,
  type StaleReadOptions,
  startKvStandin,
} from "../../../testkit/kv-standin.js";
import type { FaultContext } from "../scenario.js";

/** One value the stand-in stored, in order. */
export interface RecordedWrite {
  readonly at: number;
  readonly key: string;
  readonly value: string;
}

/** The Cloudflare KV stand-in with every stored write recorded in order. */
export interface RecordedKv {
  readonly standin: KvStandin;
  readonly writes: RecordedWrite[];
  /** The parsed `routes` now, or null. */
  routes(): CompiledMap | null;
  meta(): MapMeta | null;
  /** The pusher environment pointing the `cloudflare` sink at this stand-in. */
  env(): Record<string, string>;
}

/** A token that looks like a Cloudflare API token and is unique per run. */
export function fakeCfToken(): string {
  return `cf-${randomBytes(18).toString("base64url")}`;
}

/**
 * How stale the suite's KV reads may be: as on Cloudflare, any value of the last 60 s (or "not
 * found" for a key created within them), for half the reads that can be stale.
 */
export const FAULT_SUITE_STALE_READS: StaleReadOptions = { windowMs: 60_000, ratio: 0.5 };

/**
 * Starts the stand-in (torn down with the scenario) and registers its token as a secret. Reads
 * are eventually consistent (`FAULT_SUITE_STALE_READS`, seeded by the run's seed, printed) unless
 * `opts.staleReads` says otherwise. Every client of the scenario (pushers, edgectl) talks to this
 * one server, so they share one account budget.
 */
export async function startRecordedKv(
  ctx: FaultContext,
  opts: KvStandinOptions = {},
): Promise<RecordedKv> {
  const token = opts.token ?? fakeCfToken();
  const standin = await startKvStandin({
    perKeyWriteLimit: "off",
    seed: ctx.seed,
    staleReads: FAULT_SUITE_STALE_READS,
    ...opts,
    token,
  });
  ctx.defer(() => standin.close());
  const logsFrom = ctx.transcript.entries.length;
  ctx.defer(() => {
    const gets = standin.requests.filter((q) => q.method === "GET");
    const served = gets.filter((q) => q.stale).length;
    const logs = ctx.transcript.entries.slice(logsFrom).filter((e) => e.kind === "log");
    const count = (what: string) => logs.reduce((n, e) => n + e.text.split(what).length - 1, 0);
    ctx.progress(
      `KV stand-in: ${served} of ${gets.length} reads served stale; pushers judged ${count("a stale copy or a late write")} stale, repaired ${count("KV routes drifted from etcd")} drifts`,
    );
  });
  const stale = standin.staleReads;
  ctx.progress(
    stale
      ? `KV stand-in: stale reads within ${stale.windowMs / 1000} s (ratio ${stale.ratio ?? 0.5}, seed ${standin.seed})`
      : "KV stand-in: consistent reads",
  );
  ctx.transcript.secret("CF_API_TOKEN", token);
  const writes: RecordedWrite[] = [];
  const values = standin.values;
  const set = values.set.bind(values);
  Object.defineProperty(values, "set", {
    value: (key: string, value: string) => {
      writes.push({ at: Date.now(), key, value });
      return set(key, value);
    },
  });
  return {
    standin,
    writes,
    routes() {
      const text = values.get("routes");
      return text === undefined ? null : parseMap(text);
    },
    meta() {
      const text = values.get("meta");
      if (text === undefined) return null;
      try {
        return JSON.parse(text) as MapMeta;
      } catch {
        return null;
      }
    },
    env: () => ({
      KV_SINK: "cloudflare",
      CF_ACCOUNT_ID: standin.accountId,
      CF_API_TOKEN: standin.token,
      CF_API_BASE_URL: standin.url,
      KV_NAMESPACE_ID: standin.namespaceId,
    }),
  };
}

/** Revisions of every `routes` write in order (unparsable writes count as -1). */
export function routesRevisions(writes: readonly RecordedWrite[]): number[] {
  return writes.filter((w) => w.key === "routes").map((w) => parseMap(w.value)?.rev ?? -1);
}

/** Revisions of every `meta` write in order (unparsable writes count as -1). */
export function metaRevisions(writes: readonly RecordedWrite[]): number[] {
  return writes.filter((w) => w.key === "meta").map((w) => metaRevision(w.value));
}

/** The `rev` of a `meta` document's text; -1 when it is unparsable or has none. */
export function metaRevision(text: string): number {
  try {
    const rev = (JSON.parse(text) as { rev?: unknown }).rev;
    return typeof rev === "number" ? rev : -1;
  } catch {
    return -1;
  }
}

/**
 * The first place where a `routes` write carries a lower rev than an earlier one, or a `meta`
 * write a lower rev than an earlier `meta` (the revision `routes` was confirmed against), or
 * null. Within one etcd history neither goes back (docs/reference.md §3).
 */
export function firstRevRegression(writes: readonly RecordedWrite[]): string | null {
  for (const [key, revs] of [
    ["routes", routesRevisions(writes)],
    ["meta", metaRevisions(writes)],
  ] as const) {
    let max = -1;
    for (const [i, rev] of revs.entries()) {
      if (rev < max) return `${key} write #${i} has rev ${rev} after rev ${max}`;
      max = Math.max(max, rev);
    }
  }
  return null;
}

/**
 * The etcd revision KV reflects: `meta.rev` (what `routes` was last confirmed against) or
 * `routes.rev` (where routing last changed), whichever is higher; 0 with neither.
 */
export function kvRevision(kv: Pick<RecordedKv, "routes" | "meta">): number {
  return Math.max(kv.routes()?.rev ?? 0, kv.meta()?.rev ?? 0);
}
