/** The light entry to the sinks: settings and the factory, without loading either sink yet. */
export { createKvSink } from "./create-kv-sink.js";
export { kvSettingsFromEnv } from "./kv-settings.js";
