import type { KvEntry } from "../adapters/kv/kv-sink.js";
import type { CompiledMap } from "../core/index.js";

/**
 * The fields of the pusher's `push` and `heartbeat` log lines (docs/reference.md, log schema):
 * what one KV write carried, for the map `m` it confirms.
 */
export function pushLogFields(m: CompiledMap, entries: readonly KvEntry[], durationMs: number) {
  return {
    revision: m.rev,
    history: m.history,
    epoch: m.epoch,
    countries: Object.keys(m.countries).length,
    bytes: entries.reduce((n, e) => n + Buffer.byteLength(e.value), 0),
    duration_ms: durationMs,
    keys: entries.map((e) => e.key),
    problems: m.problems.length,
  };
}
