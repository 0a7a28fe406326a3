import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const BINS = ["edgectl", "edge-pusher"] as const;

/** A copy of the package with bin/ and a dist/ whose bundles print whether source maps are on. */
function packageCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), "launch-"));
  cpSync(join(ROOT, "bin"), join(dir, "bin"), { recursive: true });
  writeFileSync(join(dir, "package.json"), readFileSync(join(ROOT, "package.json")));
  mkdirSync(join(dir, "dist"));
  for (const name of BINS) {
    writeFileSync(
      join(dir, "dist", `${name}.js`),
      'process.stdout.write(process.sourceMapsEnabled ? "source maps on\\n" : "source maps off\\n");\n',
    );
  }
  return dir;
}

const dir = packageCopy();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(bin: string, args: readonly string[], nodeOptions = ""): Promise<string> {
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      [join(dir, "bin", `${bin}.js`), ...args],
      { env: { PATH: process.env.PATH ?? "", NODE_OPTIONS: nodeOptions }, timeout: 20_000 },
      (err, stdout, stderr) => (err ? fail(new Error(`${err.message}: ${stderr}`)) : done(stdout)),
    );
  });
}

describe("bin/launch.js source maps", () => {
  // The pusher and `edgectl heartbeat`/`observe` run for months: a map decoded by their first
  // error stack would stay in the heap for good.
  it("are off for the pusher and for edgectl's commands", async () => {
    expect(await run("edge-pusher", [])).toBe("source maps off\n");
    expect(await run("edgectl", ["heartbeat", "--pool", "fra-1"])).toBe("source maps off\n");
    expect(await run("edgectl", ["status"])).toBe("source maps off\n");
  });

  it("are on for edgectl --debug, which prints stacks", async () => {
    expect(await run("edgectl", ["status", "--debug"])).toBe("source maps on\n");
  });

  it("NODE_OPTIONS=--enable-source-maps still turns them on for any bin", async () => {
    expect(await run("edge-pusher", [], "--enable-source-maps")).toBe("source maps on\n");
  });
});
