export { chunkEntries, MAX_BULK_BYTES, MAX_BULK_PAIRS } from "./bulk-chunks.js";
export {
  type CloudflareSinkOptions,
  createCloudflareSink,
  DEFAULT_CF_API_BASE_URL,
} from "./cloudflare-sink.js";
export { createKvSink } from "./create-kv-sink.js";
export {
  type CloudflareKvSettings,
  DEFAULT_LOCAL_PERSIST,
  type KvSettings,
  kvSettingsFromEnv,
  type LocalKvSettings,
  localPersistRoot,
  ROUTING_BINDING,
} from "./kv-settings.js";
export {
  isRetryableKvError,
  type KvEntry,
  KvError,
  type KvErrorCode,
  type KvSink,
  type PutOptions,
} from "./kv-sink.js";
export { createLocalSink, type LocalSinkOptions } from "./local-sink.js";
export {
  type BudgetClock,
  CLOUDFLARE_ACCOUNT_LIMIT,
  CLOUDFLARE_BUDGET,
  DEFAULT_API_BUDGET,
  RequestBudget,
  type RequestBudgetOptions,
} from "./request-budget.js";
export { parseRetryAfter } from "./retry-after.js";
export { Secret } from "./secret.js";
