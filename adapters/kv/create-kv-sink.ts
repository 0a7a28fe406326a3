import type { Logger } from "pino";
import type { KvSettings } from "./kv-settings.js";
import type { KvSink } from "./kv-sink.js";

/**
 * Builds the sink chosen by `KV_SINK`: a local Miniflare namespace, the Cloudflare REST API, or
 * snapshot files.
 * Only the chosen sink's module is loaded (Miniflare alone is ~80 MiB of resident memory).
 */
export async function createKvSink(
  settings: KvSettings,
  deps: { readonly logger?: Logger },
): Promise<KvSink> {
  const logger = deps.logger;
  if (settings.kind === "file") {
    const { createFileSink } = await import("./file-sink.js");
    return createFileSink({ dir: settings.dir });
  }
  if (settings.kind === "local") {
    const { createLocalSink } = await import("./local-sink.js");
    return createLocalSink({
      persistDir: settings.persistDir,
      namespaceId: settings.namespaceId,
      ...(logger ? { logger } : {}),
    });
  }
  const { createCloudflareSink } = await import("./cloudflare-sink.js");
  const { CLOUDFLARE_BUDGET, RequestBudget } = await import("./request-budget.js");
  return createCloudflareSink({
    budget: new RequestBudget({ ...CLOUDFLARE_BUDGET, limit: settings.apiBudget }),
    accountId: settings.accountId,
    namespaceId: settings.namespaceId,
    apiToken: settings.apiToken,
    ...(settings.apiBaseUrl !== undefined ? { baseUrl: settings.apiBaseUrl } : {}),
    ...(logger ? { logger } : {}),
  });
}
