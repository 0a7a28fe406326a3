import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../../core/index.js";
import { type Origins, startOrigins } from "../../../testkit/origins.js";
import { startWorker } from "../../../testkit/worker.js";
import { buildMap } from "../../cases/routing-cases.js";
import { observationsWhen, rowOf } from "../../helpers/observations.js";

const TOKEN = "observe-token-for-tests";

/** Every file under `dir`, with its path. */
async function filesUnder(dir: string): Promise<{ path: string; bytes: Buffer }[]> {
  const out: { path: string; bytes: Buffer }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.push({ path, bytes: await readFile(path) });
  }
  return out;
}

describe("the aggregator stores nothing about a viewer", () => {
  let origins: Origins;
  let dir: string;
  beforeAll(async () => {
    origins = await startOrigins(["fra-1"]);
    dir = await mkdtemp(join(tmpdir(), "edge-observe-"));
  });
  afterAll(async () => {
    await origins?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("keeps no IP, cookie, URL, user agent or CMCD session of any request", async () => {
    const identifying = {
      ip: "203.0.113.197",
      cookie: "cookie-sentinel-5f1c",
      path: "path-sentinel-77ab",
      query: "query-sentinel-0c3d",
      agent: "agent-sentinel-9e42",
      session: "session-sentinel-41aa",
      content: "content-sentinel-d00d",
    };
    const worker = await startWorker(
      { OBSERVE_TOKEN: TOKEN, OBSERVE_FLUSH_SECONDS: "0" },
      { persistDir: dir },
    );
    try {
      const map = buildMap(
        { default: { chain: ["fra-1"], source: "country/_default" }, countries: {} },
        { rev: 2, originOf: (p) => origins.get(p).url },
      );
      await worker.putMap(serializeMap(map));
      for (let i = 0; i < 4; i++) {
        const cmcd = `bs,mtp=3000,sid="${identifying.session}",cid="${identifying.content}"`;
        const res = await worker.dispatch(
          `/${identifying.path}/seg${i}.m4s?q=${identifying.query}&CMCD=${encodeURIComponent(cmcd)}`,
          {
            country: "BR",
            headers: {
              "CF-Connecting-IP": identifying.ip,
              Cookie: `sid=${identifying.cookie}`,
              "User-Agent": identifying.agent,
              "CMCD-Session": `sid="${identifying.session}"`,
            },
          },
        );
        expect(res.status).toBe(200);
      }
      const body = await observationsWhen(
        worker,
        TOKEN,
        (b) => (rowOf(b, "BR", "fra-1")?.requests ?? 0) >= 4,
      );
      expect(rowOf(body, "BR", "fra-1")?.starved).toBe(4);
      expect(JSON.stringify(body)).not.toMatch(/sentinel|203\.0\.113/);
    } finally {
      await worker.dispose();
    }
    const files = await filesUnder(dir);
    const aggregatorFiles = files.filter(
      (f) => f.bytes.includes("fra-1") && /\.sqlite/.test(f.path),
    );
    // The aggregator's storage is on disk and holds the row (so the scan reads the right files).
    expect(aggregatorFiles.length).toBeGreaterThan(0);
    for (const f of files) {
      for (const [what, value] of Object.entries(identifying)) {
        expect(f.bytes.includes(value), `${what} in ${f.path}`).toBe(false);
      }
    }
  });
});
