/**
 * A local imitation of Cloudflare's Workers KV REST API (v4) for tests, on 127.0.0.1; the parts
 * live in `kv-standin/`. Documented behaviours it reproduces (developers.cloudflare.com):
 * - v4 envelope `{success, errors:[{code,message}], messages, result}`; auth by
 *   `Authorization: Bearer <token>`: no header is 400 `9106`, a header that is not `Bearer <token>`
 *   400 `6003` (`error_chain` `6111 Invalid format for Authorization header`), a wrong token
 *   403 `10000 Authentication error`.
 * - `PUT /accounts/{a}/storage/kv/namespaces/{n}/bulk`: array of {key, value[, base64]}, at most
 *   10,000 pairs and under 100 MB (kv/api/write-key-value-pairs); keys 1..512 bytes, values up to
 *   25 MiB (kv/platform/limits); answers `result: {successful_key_count, unsuccessful_keys}`.
 * - `GET …/values/{key}`: raw bytes, or 404 `10009 get: 'key not found'`; unknown namespace 404
 *   `10013`.
 * - 1 write per second to the same key, else 429 (kv/platform/limits; REST code undocumented,
 *   10100 here).
 * - One budget per user, 1,200 requests / 5 minutes across every token and tool; past it every
 *   call is blocked with 429 `971` and `Retry-After` (fundamentals/api/reference/limits).
 * - Eventual consistency (opt-in, `staleReads`): a read may return any value the key held in the
 *   last N seconds, or "not found" for a key created within them (kv/concepts/how-kv-works).
 *
 * Fault injection (seeded, reproducible): 429 + Retry-After, 500, the edge's HTML 5xx pages, a
 * foreign HTML 404, hangs, and 200 bulk answers with `unsuccessful_keys`.
 */
export { AccountBudget } from "./kv-standin/account-budget.js";
export type { KvFault, KvFaultOptions } from "./kv-standin/faults.js";
export { seededRandom } from "./kv-standin/seeded-random.js";
export {
  type KvRequestLogEntry,
  type KvStandin,
  type KvStandinOptions,
  startKvStandin,
} from "./kv-standin/start-kv-standin.js";
export type { StaleReadOptions } from "./kv-standin/versioned-values.js";
