import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { createKvSink } from "../../../adapters/kv/create-kv-sink.js";
import { kvSettingsFromEnv, localPersistRoot } from "../../../adapters/kv/kv-settings.js";
import { KvError, type KvSink } from "../../../adapters/kv/kv-sink.js";
import { createLocalSink } from "../../../adapters/kv/local-sink.js";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../../..");
const WRANGLER = join(ROOT, "node_modules/.bin/wrangler");
const NAMESPACE = "00000000000000000000000000000000"; // the ROUTING id in wrangler.toml

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A throwaway project directory holding a copy of the repository's wrangler.toml. */
function tempProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "kv-local-"));
  copyFileSync(join(ROOT, "wrangler.toml"), join(dir, "wrangler.toml"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function openSink(cwd: string): Promise<KvSink> {
  const sink = await createKvSink(kvSettingsFromEnv({ KV_LOCAL_PERSIST: "state" }, { cwd }), {});
  cleanups.push(() => sink.close());
  return sink;
}

/** `wrangler kv key …  --local --binding ROUTING --persist-to state`, as an operator would run it. */
async function wranglerKv(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(
    WRANGLER,
    ["kv", "key", ...args, "--local", "--binding", "ROUTING", "--persist-to", "state"],
    {
      cwd,
      env: {
        ...process.env,
        WRANGLER_SEND_METRICS: "false",
        WRANGLER_LOG_PATH: join(cwd, "wrangler-logs"),
        CI: "1",
      },
      timeout: 60_000,
    },
  );
  return stdout;
}

describe("local KV sink (Miniflare)", () => {
  it("writes every entry and reads them back; absent keys are null", async () => {
    const cwd = tempProject();
    const sink = await openSink(cwd);
    expect(sink.kind).toBe("local");
    await sink.putMany([
      { key: "routes", value: '{"rev":1}' },
      { key: "meta", value: '{"epoch":"e1"}' },
    ]);
    expect(await sink.get("routes")).toBe('{"rev":1}');
    expect(await sink.get("meta")).toBe('{"epoch":"e1"}');
    expect(await sink.get("absent")).toBeNull();
    await sink.putMany([{ key: "routes", value: '{"rev":2}' }]);
    expect(await sink.get("routes")).toBe('{"rev":2}');
  });

  it("persists under <persist-to>/v3/kv/<namespace id>, where wrangler --local reads it", async () => {
    const cwd = tempProject();
    const sink = await openSink(cwd);
    const value = `{"rev":${Date.now()},"text":"wrangler sees ü"}`;
    await sink.putMany([{ key: "routes", value }]);
    await sink.close();

    const kvDir = join(localPersistRoot(join(cwd, "state")), "kv");
    expect(kvDir).toBe(join(cwd, "state/v3/kv"));
    expect(readdirSync(kvDir).sort()).toEqual([NAMESPACE, "miniflare-KVNamespaceObject"].sort());
    expect(existsSync(join(kvDir, NAMESPACE, "blobs"))).toBe(true);

    // Wrangler 4 resolves `--persist-to state` and `[[kv_namespaces]] ROUTING` exactly as `wrangler dev` does.
    expect(await wranglerKv(cwd, "get", "routes")).toBe(value);
  });

  it("is visible to another process while the sink stays open, write after write", async () => {
    const cwd = tempProject();
    const sink = await openSink(cwd);
    await sink.putMany([{ key: "routes", value: "v1" }]);
    expect(await wranglerKv(cwd, "get", "routes")).toBe("v1");
    await sink.putMany([{ key: "routes", value: "v2" }]);
    expect(await wranglerKv(cwd, "get", "routes")).toBe("v2");
  });

  it("sees what wrangler --local writes, across processes", async () => {
    const cwd = tempProject();
    await wranglerKv(cwd, "put", "meta", '{"from":"wrangler"}');
    const sink = await openSink(cwd);
    expect(await sink.get("meta")).toBe('{"from":"wrangler"}');
  });

  it("lets another process read each entry of a putMany as soon as it lands, before the next", async () => {
    const persistDir = join(tempProject(), "state");
    // A long pause, so the read surely falls between the two puts.
    const writer = await createLocalSink({ persistDir, namespaceId: NAMESPACE, putGapMs: 1_500 });
    cleanups.push(() => writer.close());
    const reader = await createLocalSink({ persistDir, namespaceId: NAMESPACE });
    cleanups.push(() => reader.close());
    await writer.putMany([
      { key: "routes", value: "r1" },
      { key: "meta", value: "m1" },
    ]);
    const writing = writer.putMany([
      { key: "routes", value: "r2" },
      { key: "meta", value: "m2" },
    ]);
    let seen: string | null = null;
    const deadline = Date.now() + 1_000;
    while (seen !== "r2" && Date.now() < deadline) seen = await reader.get("routes");
    expect(seen).toBe("r2");
    expect(await reader.get("meta")).toBe("m1");
    await writing;
    expect(await reader.get("meta")).toBe("m2");
  });

  it("stops with a timeout, writing no later entry, when the deadline passes between puts", async () => {
    const persistDir = join(tempProject(), "state");
    const sink = await createLocalSink({ persistDir, namespaceId: NAMESPACE, putGapMs: 1_000 });
    cleanups.push(() => sink.close());
    const fence = new AbortController();
    const writing = sink.putMany(
      [
        { key: "routes", value: "r1" },
        { key: "meta", value: "m1" },
      ],
      { signal: fence.signal },
    );
    setTimeout(() => fence.abort(), 300);
    const error = await writing.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KvError);
    expect((error as KvError).code).toBe("timeout");
    expect(await sink.get("routes")).toBe("r1");
    expect(await sink.get("meta")).toBeNull();
  });

  it("close is idempotent", async () => {
    const sink = await openSink(tempProject());
    await sink.close();
    await expect(sink.close()).resolves.toBeUndefined();
  });
});
