/**
 * The entry to the KV sinks: their settings and the factory, which loads only the chosen sink
 * (each sink's module, and what it imports, stays out until `createKvSink` asks for it).
 */
export { createKvSink } from "./create-kv-sink.js";
export {
  type CloudflareKvSettings,
  DEFAULT_KV_FILE_DIR,
  DEFAULT_LOCAL_PERSIST,
  type FileKvSettings,
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
export { Secret } from "./secret.js";
