import type { Logger } from "pino";
import { createCloudflareSink } from "./cloudflare-sink.js";
import type { KvSettings } from "./kv-settings.js";
import type { KvSink } from "./kv-sink.js";
import { createLocalSink } from "./local-sink.js";

/** Builds the sink chosen by `KV_SINK`: a local Miniflare namespace or the Cloudflare REST API. */
export async function createKvSink(
  settings: KvSettings,
  deps: { readonly logger?: Logger },
): Promise<KvSink> {
  const logger = deps.logger;
  if (settings.kind === "local") {
    return createLocalSink({
      persistDir: settings.persistDir,
      namespaceId: settings.namespaceId,
      ...(logger ? { logger } : {}),
    });
  }
  return createCloudflareSink({
    accountId: settings.accountId,
    namespaceId: settings.namespaceId,
    apiToken: settings.apiToken,
    ...(settings.apiBaseUrl !== undefined ? { baseUrl: settings.apiBaseUrl } : {}),
    ...(logger ? { logger } : {}),
  });
}
