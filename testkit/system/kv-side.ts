import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KvStandin, type KvStandinOptions, startKvStandin } from "../kv-standin.js";
import type { Owner } from "./owner.js";

/** What every KV side of the system offers: the pusher's sink variables. */
export interface KvSide {
  /** `KV_SINK` and the sink's own variables. */
  readonly sinkEnv: Readonly<Record<string, string>>;
}

/** The local sink: Miniflare's persisted namespace, where `wrangler dev --persist-to` reads. */
export interface LocalKv extends KvSide {
  readonly persistDir: string;
  /** `KV_NAMESPACE_ID`, or null for wrangler.toml's ROUTING namespace (the sink's default). */
  readonly namespaceId: string | null;
}

/** The Cloudflare sink against the KV REST stand-in (testkit/kv-standin.ts) in this process. */
export interface StandinKv extends KvSide {
  readonly standin: KvStandin;
  readonly namespaceId: string;
}

/**
 * The local sink in `persistDir`, or in a temporary directory the owner removes;
 * `namespaceId` as {@link LocalKv.namespaceId}.
 */
export function localKv(
  o: { readonly persistDir?: string; readonly namespaceId?: string } = {},
): (owner: Owner) => Promise<LocalKv> {
  return async (owner) => {
    let persistDir = o.persistDir;
    if (persistDir === undefined) {
      const dir = mkdtempSync(join(tmpdir(), "edge-kv-"));
      owner.add("kv persist dir", () => rmSync(dir, { recursive: true, force: true }));
      persistDir = dir;
    }
    return {
      persistDir,
      namespaceId: o.namespaceId ?? null,
      sinkEnv: {
        KV_SINK: "local",
        KV_LOCAL_PERSIST: persistDir,
        ...(o.namespaceId ? { KV_NAMESPACE_ID: o.namespaceId } : {}),
      },
    };
  };
}

/** The Cloudflare sink against a KV stand-in started with `opts`. */
export function standinKv(opts: KvStandinOptions = {}): (owner: Owner) => Promise<StandinKv> {
  return async (owner) => {
    const standin = await startKvStandin(opts);
    owner.add("kv stand-in", () => standin.close());
    return {
      standin,
      namespaceId: standin.namespaceId,
      sinkEnv: {
        KV_SINK: "cloudflare",
        CF_ACCOUNT_ID: standin.accountId,
        CF_API_TOKEN: standin.token,
        CF_API_BASE_URL: standin.url,
        KV_NAMESPACE_ID: standin.namespaceId,
      },
    };
  };
}
