import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import type { DesiredState } from "../../../core/index.js";
import type { FaultContext } from "../scenario.js";
import type { ApplyAttempt } from "./apply-history.js";
import { applyAttemptOf } from "./apply-history.js";
import type { MemberClients } from "./cluster-world.js";
import { edgectlBinary } from "./edgectl.js";
import { POOLS } from "./etcd-world.js";
import type { CommittedChange } from "./kv-latency.js";

/** Pools that have a heartbeat in the cluster scenarios (the others have no health key). */
export const LIVE_POOLS = ["fra-1", "ams-1", "par-1"] as const;

/** One `edgectl boost` run and what etcd holds afterwards. */
export interface BoostAttempt {
  readonly marker: string;
  readonly country: string;
  readonly code: number;
  readonly stderr: string;
  /** Whether `override/CC` carries this boost's reason right after the run. */
  readonly written: boolean;
  readonly change: CommittedChange | null;
}

/** A desired state whose DE rule and fra-1 region name the attempt. */
export function desiredFor(marker: string, k: number): DesiredState {
  return {
    pools: Object.fromEntries(
      POOLS.map((p) => [
        p,
        p === "fra-1"
          ? { origin: `https://${p}.example.net`, region: marker }
          : { origin: `https://${p}.example.net` },
      ]),
    ),
    countries: {
      _default: { primary: "ams-1", fallbacks: ["par-1"] },
      // Consecutive applies always change routing: DE cycles through the live pools.
      DE: {
        primary: LIVE_POOLS[k % 3] ?? "fra-1",
        fallbacks: [LIVE_POOLS[(k + 1) % 3] ?? "ams-1"],
      },
    },
  };
}

/**
 * Sequential `edgectl apply --yes` runs (the real binary) until `until()` says stop, with each
 * run's exit time (its commit happened no later).
 */
export async function applyLoop(
  ctx: FaultContext,
  env: Record<string, string>,
  until: () => boolean,
): Promise<{ attempts: ApplyAttempt[]; exitedAt: Map<string, number> }> {
  const dir = mkdtempSync(join(tmpdir(), "faults-cluster-apply-"));
  ctx.defer(() => rmSync(dir, { recursive: true, force: true }));
  const attempts: ApplyAttempt[] = [];
  const exitedAt = new Map<string, number>();
  for (let k = 0; !until(); k++) {
    const marker = `a${k}`;
    const desired = desiredFor(marker, k);
    const file = join(dir, `${marker}.yaml`);
    writeFileSync(file, stringify(desired));
    const r = await edgectlBinary(ctx, ["apply", file, "--yes"], env, 90_000);
    exitedAt.set(marker, Date.now());
    attempts.push(applyAttemptOf(marker, desired, r));
  }
  return { attempts, exitedAt };
}

const BOOST_COUNTRIES = ["FR", "GB", "NL", "BE"] as const;

/** Sequential `edgectl boost` runs, each checked against etcd right after it exits. */
export async function boostLoop(
  ctx: FaultContext,
  env: Record<string, string>,
  mc: MemberClients,
  prefix: string,
  until: () => boolean,
): Promise<BoostAttempt[]> {
  const out: BoostAttempt[] = [];
  for (let k = 0; !until(); k++) {
    const marker = `b${k}-${Math.random().toString(36).slice(2, 6)}`;
    // (country, pool) pairs repeat only every 12 boosts, so each one changes routing.
    const country = BOOST_COUNTRIES[k % 4] ?? "FR";
    const pool = LIVE_POOLS[k % 3] ?? "fra-1";
    const r = await edgectlBinary(
      ctx,
      ["boost", country, "--pool", pool, "--ttl", "2m", "--reason", marker],
      env,
      60_000,
    );
    const at = Date.now();
    const kv = await mc.any(async (c) => {
      const res = await c.get(`${prefix}override/${country}`).exec();
      return res.kvs[0];
    });
    let reason: unknown;
    try {
      reason = kv
        ? (JSON.parse(kv.value.toString("utf8")) as { reason?: unknown }).reason
        : undefined;
    } catch {
      reason = undefined;
    }
    const written = reason === marker;
    out.push({
      marker,
      country,
      code: r.code,
      stderr: r.stderr,
      written,
      change: written && kv ? { label: marker, rev: Number(kv.mod_revision), at } : null,
    });
  }
  return out;
}
