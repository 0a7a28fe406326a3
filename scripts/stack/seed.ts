import { readFileSync } from "node:fs";
import { Etcd3 } from "etcd3";
import { parse } from "yaml";
import { type DesiredState, validateDesiredState } from "../../core/index.js";

/** A pool of the seed file whose origin is on this machine, so the stack runs a demo origin. */
export interface LocalPool {
  readonly pool: string;
  readonly port: number;
  readonly origin: string;
}

/** Reads and validates the seed desired-state file. */
export function readSeed(file: string): DesiredState {
  const result = validateDesiredState(parse(readFileSync(file, "utf8")));
  if (!result.ok) {
    const lines = result.problems.map((p) => `  ${p.key}: ${p.message}`).join("\n");
    throw new Error(`${file} is not a valid desired-state file:\n${lines}`);
  }
  return result.state;
}

/** The pools whose origin is `http://127.0.0.1:PORT` (or localhost), in file order. */
export function localPools(state: DesiredState): LocalPool[] {
  const out: LocalPool[] = [];
  for (const [pool, def] of Object.entries(state.pools)) {
    const url = new URL(def.origin);
    if (url.protocol !== "http:" || !["127.0.0.1", "localhost"].includes(url.hostname)) continue;
    out.push({ pool, port: Number(url.port || 80), origin: def.origin });
  }
  return out;
}

/** Counts the keys under the routing prefix (a count-only range read). */
export async function countPrefix(endpoint: string, prefix: string): Promise<number> {
  const client = new Etcd3({ hosts: [endpoint], dialTimeout: 3_000 });
  try {
    return await client.getAll().prefix(prefix).count();
  } finally {
    client.close();
  }
}
