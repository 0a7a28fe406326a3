import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ownSignals } from "../../adapters/own-signals.js";

const ROOT = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "own-signals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const releases: Array<() => void> = [];
afterEach(() => {
  for (const r of releases.splice(0)) r();
});

describe("ownSignals", () => {
  it("removes a listener added later for an owned signal, and only those", async () => {
    const seen: string[] = [];
    releases.push(ownSignals(["SIGINT", "SIGTERM"], (s) => seen.push(`ours ${s}`)));
    const theirs = () => seen.push("theirs");
    process.on("SIGINT", theirs);
    process.on("SIGHUP", theirs);
    await Promise.resolve();
    expect(process.listeners("SIGINT")).not.toContain(theirs);
    expect(process.listeners("SIGHUP")).toContain(theirs);
    process.removeListener("SIGHUP", theirs);
    process.emit("SIGINT");
    process.emit("SIGTERM");
    expect(seen).toEqual(["ours SIGINT", "ours SIGTERM"]);
  });

  it("guards nothing once released", async () => {
    const release = ownSignals(["SIGINT"], () => {});
    release();
    const theirs = () => {};
    process.on("SIGINT", theirs);
    await Promise.resolve();
    expect(process.listeners("SIGINT")).toContain(theirs);
    process.removeListener("SIGINT", theirs);
  });

  // A process with a workerd running under Miniflare gets SIGINT and needs 300 ms to stop.
  const fixture = (owned: boolean) => `
import { writeFileSync } from "node:fs";
import { ownSignals } from ${JSON.stringify(join(ROOT, "adapters/own-signals.ts"))};
import { newMiniflare } from ${JSON.stringify(join(ROOT, "testkit/miniflare.ts"))};
const out = process.argv[2];
const stop = () => setTimeout(async () => {
  await mf.dispose();
  writeFileSync(out, "stopped");
  process.exit(130);
}, 300);
if (${owned}) ownSignals(["SIGINT", "SIGTERM"], stop);
else process.on("SIGINT", stop);
const mf = newMiniflare({ modules: true, script: "export default { fetch() { return new Response('ok'); } }" });
await mf.ready;
writeFileSync(out + ".ready", "1");
setInterval(() => {}, 1000);
`;

  async function stopsCleanly(owned: boolean): Promise<boolean> {
    const tag = owned ? "owned" : "plain";
    const script = join(dir, `${tag}.mts`);
    const out = join(dir, `stopped-${tag}`);
    writeFileSync(script, fixture(owned));
    const child = spawn(process.execPath, ["--import", "tsx", script, out], {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let err = "";
    child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    const exited = once(child, "exit");
    const deadline = Date.now() + 30_000;
    while (!existsSync(`${out}.ready`) && Date.now() < deadline && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(`${out}.ready`), err).toBe(true);
    child.kill("SIGINT");
    const [code] = await exited;
    expect(code).toBe(130);
    return existsSync(out);
  }

  it("lets a process with Miniflare finish its own shutdown on SIGINT, which Miniflare's exit hook cuts short", async () => {
    expect(await stopsCleanly(true)).toBe(true);
    expect(await stopsCleanly(false)).toBe(false);
  }, 90_000);
});
