import { COUNTRY_CODES } from "../../core/index.js";

/** One routing key and its value, relative to the prefix (e.g. `country/DE`). */
export interface FixtureEntry {
  readonly rel: string;
  readonly value: string;
}

/** Shape of the scale fixture. */
export interface ScaleFixtureOptions {
  /** Total keys under the prefix, junk included. */
  readonly keys: number;
  readonly pools: number;
  /** Origin of pool `name`; defaults to `https://{name}.origin.example.com`. */
  readonly origin?: (name: string) => string;
}

/** `p000`…: pool names of the scale fixture. */
export function poolName(i: number): string {
  return `p${String(i).padStart(3, "0")}`;
}

/**
 * Every ISO country (plus XX, T1 and `_default`) with a rule of a primary and three fallbacks,
 * `pools` pools each with a healthy `health/` key, `epoch`, and junk keys (unknown to the
 * schema, ignored and reported) up to `keys` in total.
 */
export function scaleFixture(o: ScaleFixtureOptions): FixtureEntry[] {
  const origin = o.origin ?? ((name: string) => `https://${name}.origin.example.com`);
  const out: FixtureEntry[] = [];
  for (let i = 0; i < o.pools; i++) {
    const name = poolName(i);
    out.push({ rel: `pool/${name}`, value: JSON.stringify({ origin: origin(name) }) });
    out.push({ rel: `health/${name}`, value: JSON.stringify({ status: "healthy", p90_ms: 100 }) });
  }
  const targets = [...COUNTRY_CODES, "_default"];
  targets.forEach((cc, i) => {
    out.push({ rel: `country/${cc}`, value: countryRule(i, o.pools) });
  });
  out.push({ rel: "epoch", value: "1" });
  for (let j = 0; out.length < o.keys; j++) {
    out.push({ rel: `junk/k${String(j).padStart(5, "0")}`, value: `{"note":"junk ${j}"}` });
  }
  return out;
}

/** A rule for country number `i`: primary and three fallbacks spread over the pools. */
export function countryRule(i: number, pools: number, shift = 0): string {
  const at = (k: number) => poolName((i * 7 + k * 53 + shift) % pools);
  return JSON.stringify({ primary: at(0), fallbacks: [at(1), at(2), at(3)] });
}

/**
 * The growth fixture: every ISO country (plus XX, T1 and `_default`: 252 rules), `epoch`, and the
 * rest pools, each with its `pool/` and a healthy `health/` key, so all `keys` are real routing
 * state. Rules spread their four pools over all of them.
 */
export function growthFixture(keys: number): FixtureEntry[] {
  const targets = [...COUNTRY_CODES, "_default"];
  const pools = Math.max(4, Math.floor((keys - targets.length - 1) / 2));
  const out: FixtureEntry[] = [{ rel: "epoch", value: "1" }];
  for (let i = 0; i < pools; i++) {
    const name = growthPool(i);
    out.push({
      rel: `pool/${name}`,
      value: JSON.stringify({ origin: `https://${name}.origin.example.com` }),
    });
    out.push({ rel: `health/${name}`, value: JSON.stringify({ status: "healthy", p90_ms: 100 }) });
  }
  targets.forEach((cc, i) => {
    out.push({ rel: `country/${cc}`, value: growthRule(i, pools) });
  });
  return out;
}

/** `g00000`…: pool names of the growth fixture. */
export function growthPool(i: number): string {
  return `g${String(i).padStart(5, "0")}`;
}

/** Rule `i` of the growth fixture (a primary and three fallbacks), moved by `shift`. */
export function growthRule(i: number, pools: number, shift = 0): string {
  const at = (k: number) => growthPool((i * 197 + k * 7919 + shift * 31) % pools);
  return JSON.stringify({ primary: at(0), fallbacks: [at(1), at(2), at(3)] });
}
