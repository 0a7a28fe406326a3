import type { Logger } from "pino";
import { createCloudflareSink } from "./cloudflare-sink.js";
import { createFileSink } from "./file-sink.js";
import type { KvSettings } from "./kv-settings.js";
import type { KvSink } from "./kv-sink.js";
import { createLocalSink } from "./local-sink.js";
import { CLOUDFLARE_BUDGET, RequestBudget } from "./request-budget.js";

/**
 * Builds the sink chosen by `KV_SINK`: a local Miniflare namespace, the Cloudflare REST API, or
 * KV as files. Miniflare (~80 MiB of resident memory) is loaded only for `local`.
 */
export async function createKvSink(
  settings: KvSettings,
  deps: { readonly logger?: Logger },
): Promise<KvSink> {
  const logger = deps.logger;
  if (settings.kind === "file") {
    return createFileSink({ dir: settings.dir });
  }
  if (settings.kind === "local") {
    return createLocalSink({
      persistDir: settings.persistDir,
      namespaceId: settings.namespaceId,
      ...(logger ? { logger } : {}),
    });
  }
  return createCloudflareSink({
    budget: new RequestBudget({ ...CLOUDFLARE_BUDGET, limit: settings.apiBudget }),
    accountId: settings.accountId,
    namespaceId: settings.namespaceId,
    apiToken: settings.apiToken,
    ...(settings.apiBaseUrl !== undefined ? { baseUrl: settings.apiBaseUrl } : {}),
    ...(logger ? { logger } : {}),
  });
}
