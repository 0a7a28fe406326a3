import { setTimeout as sleep } from "node:timers/promises";
import { COUNTRY_CODES, type CompiledMap } from "../../core/index.js";
import type { Cleanup } from "../lib/cleanup.js";
import { putOne } from "../lib/etcd-load.js";
import type { FixtureEntry } from "../lib/fixture.js";
import { startStack } from "../lib/stack.js";
import { round, summarize } from "../lib/stats.js";

/** `write_economy` in results.json. */
export interface WriteEconomyResult {
  /** One compiled map (`routes`): writes per hour for a pool flapping every minute. */
  readonly map_writes_per_hour: number;
  /** One KV key per country: how many keys would have changed, per hour. */
  readonly per_key_writes_per_hour: number;
  readonly ratio: number;
  readonly transitions: number;
  readonly countries_naming_pool: number;
  readonly map_writes_per_transition: number;
  readonly per_key_changes_per_transition: number;
}

/** How many health transitions to run. */
export interface WriteEconomyOptions {
  readonly transitions: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

const NAMING = 40;
/** A flap every minute: 60 health transitions an hour. */
const TRANSITIONS_PER_HOUR = 60;
// Longer than the 1 s write throttle, so each transition is written on its own, as a
// once-a-minute flap would be.
const SPACING_MS = 1_500;

function fixture(): FixtureEntry[] {
  const out: FixtureEntry[] = [];
  for (const p of ["flap-1", "fra-1", "ams-1", "par-1"]) {
    out.push({ rel: `pool/${p}`, value: JSON.stringify({ origin: `https://${p}.example.net` }) });
    out.push({ rel: `health/${p}`, value: JSON.stringify({ status: "healthy" }) });
  }
  const codes = [...COUNTRY_CODES];
  codes.slice(0, 80).forEach((cc, i) => {
    // 20 prefer the flapping pool, 20 name it as a fallback, 40 never name it.
    const rule =
      i < 20
        ? { primary: "flap-1", fallbacks: ["fra-1", "par-1"] }
        : i < NAMING
          ? { primary: "ams-1", fallbacks: ["flap-1", "par-1"] }
          : { primary: "fra-1", fallbacks: ["ams-1"] };
    out.push({ rel: `country/${cc}`, value: JSON.stringify(rule) });
  });
  out.push({ rel: "country/_default", value: JSON.stringify({ primary: "par-1", fallbacks: [] }) });
  out.push({ rel: "epoch", value: "1" });
  return out;
}

/** Per-country keys a transition would rewrite: routes that differ (`_default` included). */
function changedKeys(before: CompiledMap, after: CompiledMap): number {
  const ccs = new Set([...Object.keys(before.countries), ...Object.keys(after.countries)]);
  let n = JSON.stringify(before.default) === JSON.stringify(after.default) ? 0 : 1;
  for (const cc of ccs) {
    if (JSON.stringify(before.countries[cc]) !== JSON.stringify(after.countries[cc])) n++;
  }
  return n;
}

/** A pool that 40 countries name goes unhealthy and healthy again, `transitions` times. */
export async function writeEconomy(o: WriteEconomyOptions): Promise<WriteEconomyResult> {
  const stack = await startStack(o.cleanup, fixture());
  const read = async () => JSON.parse((await stack.reader.get("routes")) ?? "null") as CompiledMap;
  await sleep(SPACING_MS);
  let before = await read();
  const startedWall = Date.now();
  const changed: number[] = [];
  for (let i = 0; i < o.transitions; i++) {
    const status = i % 2 === 0 ? "unhealthy" : "healthy";
    const rev = await putOne(
      stack.client,
      `${stack.prefix}health/flap-1`,
      JSON.stringify({ status }),
    );
    if ((await stack.waitKvRevision(rev, 30_000, 5)) === null) throw new Error("flap not pushed");
    const after = await read();
    changed.push(changedKeys(before, after));
    before = after;
    await sleep(SPACING_MS);
  }
  const writes = stack.pusher.routesWrites(startedWall).length;
  const perTransition = writes / o.transitions;
  const perKey = summarize(changed).mean;
  o.log(
    `  ${o.transitions} transitions: ${writes} routes writes; per-country layout: ${perKey} keys per transition`,
  );
  return {
    map_writes_per_hour: round(perTransition * TRANSITIONS_PER_HOUR, 0),
    per_key_writes_per_hour: round(perKey * TRANSITIONS_PER_HOUR, 0),
    ratio: round(perKey / perTransition, 1),
    transitions: o.transitions,
    countries_naming_pool: NAMING,
    map_writes_per_transition: round(perTransition, 2),
    per_key_changes_per_transition: round(perKey, 2),
  };
}
