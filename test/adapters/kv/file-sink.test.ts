import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createFileSink } from "../../../adapters/kv/file-sink.js";
import { isRetryableKvError, KvError } from "../../../adapters/kv/kv-sink.js";

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "edge-file-sink-"));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A map-like document of about `kib` KiB whose every byte depends on `n`. */
function documentOf(n: number, kib: number): string {
  return JSON.stringify({ v: 1, rev: n, pad: String(n % 10).repeat(kib * 1024) });
}

describe("the file sink (KV_SINK=file)", () => {
  it("writes each key as <key>.json, reads it back, and reads a missing key as null", async () => {
    const dir = join(tempDir(), "nested", "snapshot");
    const sink = await createFileSink({ dir });
    expect(sink.kind).toBe("file");
    expect(await sink.get("routes")).toBeNull();
    await sink.putMany([
      { key: "routes", value: '{"v":1}' },
      { key: "meta", value: '{"v":1,"rev":3}' },
    ]);
    expect(readFileSync(join(dir, "routes.json"), "utf8")).toBe('{"v":1}');
    expect(await sink.get("meta")).toBe('{"v":1,"rev":3}');
    expect(readdirSync(dir).sort()).toEqual(["meta.json", "routes.json"]);
  });

  it("never lets a concurrent reader see a torn file", async () => {
    const dir = tempDir();
    const sink = await createFileSink({ dir });
    await sink.putMany([{ key: "routes", value: documentOf(0, 64) }]);
    // A separate process reads as fast as it can while this one replaces the file 1,000 times.
    const reader = spawn(
      process.execPath,
      [
        "-e",
        `const fs = require("fs"); let reads = 0, torn = 0; const end = Date.now() + 60000;
         process.stdin.on("data", () => { console.log(JSON.stringify({ reads, torn })); process.exit(0); });
         (function loop() {
           for (let i = 0; i < 50; i++) {
             const t = fs.readFileSync(${JSON.stringify(join(dir, "routes.json"))}, "utf8");
             reads++;
             try { const d = JSON.parse(t); if (d.pad !== String(d.rev % 10).repeat(d.pad.length)) torn++; } catch { torn++; }
           }
           if (Date.now() < end) setImmediate(loop);
         })();`,
      ],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    let out = "";
    reader.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    for (let n = 1; n <= 1000; n++) {
      await sink.putMany([{ key: "routes", value: documentOf(n, n % 2 ? 8 : 256) }]);
    }
    const done = new Promise((r) => reader.once("exit", r));
    reader.stdin.write("stop\n");
    await done;
    const { reads, torn } = JSON.parse(out) as { reads: number; torn: number };
    expect(reads).toBeGreaterThan(100);
    expect(torn).toBe(0);
    expect(JSON.parse((await sink.get("routes")) ?? "").rev).toBe(1000);
    expect(readdirSync(dir)).toEqual(["routes.json"]);
  });

  it("refuses a key that is not a plain name (no path ever leaves the directory)", async () => {
    const sink = await createFileSink({ dir: tempDir() });
    for (const key of ["../etc/passwd", "a/b", "", ".hidden", "Routes"]) {
      const e = await sink.putMany([{ key, value: "x" }]).catch((err: unknown) => err);
      expect(e).toBeInstanceOf(KvError);
      expect((e as KvError).code).toBe("bad-request");
    }
  });

  it("a write that fails is a retryable file-error, leaves the last good file and no scratch file", async () => {
    if (process.getuid?.() === 0) {
      // root ignores permissions: fill the name of the scratch file's directory instead.
      const dir = tempDir();
      const sink = await createFileSink({ dir });
      await sink.putMany([{ key: "routes", value: "good" }]);
      rmSync(dir, { recursive: true });
      const e = await sink.putMany([{ key: "routes", value: "new" }]).catch((err: unknown) => err);
      expect(e).toBeInstanceOf(KvError);
      expect((e as KvError).code).toBe("file-error");
      expect((e as KvError).message).toContain("ENOENT");
      expect(isRetryableKvError(e)).toBe(true);
      return;
    }
    const dir = tempDir();
    const sink = await createFileSink({ dir });
    await sink.putMany([{ key: "routes", value: "good" }]);
    chmodSync(dir, 0o555);
    try {
      const e = await sink.putMany([{ key: "routes", value: "new" }]).catch((err: unknown) => err);
      expect((e as KvError).code).toBe("file-error");
      expect(isRetryableKvError(e)).toBe(true);
      expect(await sink.get("routes")).toBe("good");
      expect(readdirSync(dir)).toEqual(["routes.json"]);
    } finally {
      chmodSync(dir, 0o755);
    }
  });

  it("a directory that cannot be created fails at open, naming KV_FILE_DIR", async () => {
    const file = join(tempDir(), "plain-file");
    const sink = await createFileSink({ dir: file });
    await sink.putMany([{ key: "routes", value: "x" }]);
    const e = await createFileSink({ dir: join(file, "routes.json", "sub") }).catch(
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(KvError);
    expect((e as KvError).message).toMatch(/KV_FILE_DIR/);
  });
});
