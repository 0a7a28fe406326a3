import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const scripts = (
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    scripts: Record<string, string>;
  }
).scripts;
const dir = mkdtempSync(join(tmpdir(), "npm-scripts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each command of the scripts that runs a TypeScript file, as `[launcher, file]`. */
function typescriptCommands(): Array<[string, string, string]> {
  const out: Array<[string, string, string]> = [];
  for (const [name, line] of Object.entries(scripts)) {
    for (const command of line.split("&&").map((c) => c.trim())) {
      const m = /^(.*?)\s*(\S+\.ts)\b/.exec(command);
      if (m) out.push([name, m[1] ?? "", m[2] ?? ""]);
    }
  }
  return out;
}

// A harness whose event loop is busy a second at a time, as the soak's and the bench's are
// under load, and whose SIGINT handler needs 300 ms to stop what it started.
const FIXTURE = `
import { writeFileSync } from "node:fs";
const out = process.argv[2] as string;
process.on("SIGINT", () => {
  setTimeout(() => { writeFileSync(out, "cleaned up"); process.exit(130); }, 300);
});
setInterval(() => { const t = Date.now(); while (Date.now() - t < 1000); }, 1);
writeFileSync(out + ".ready", "1");
`;

/** Runs the fixture under `launcher`, sends its process group SIGINT (Ctrl-C), says whether it cleaned up. */
async function cleansUpOnCtrlC(launcher: readonly string[], tag: string): Promise<boolean> {
  const script = join(dir, `busy-${tag}.ts`);
  const out = join(dir, `cleaned-${tag}`);
  writeFileSync(script, FIXTURE);
  const [command = "", ...args] = launcher;
  const child = spawn(command, [...args, script, out], {
    cwd: ROOT,
    detached: true,
    stdio: "ignore",
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
  });
  const exited = once(child, "exit");
  const deadline = Date.now() + 20_000;
  while (!existsSync(`${out}.ready`) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  expect(existsSync(`${out}.ready`)).toBe(true);
  await new Promise((r) => setTimeout(r, 500));
  process.kill(-(child.pid as number), "SIGINT");
  await exited;
  // The fixture exits only after writing; a SIGKILLed one leaves nothing.
  await new Promise((r) => setTimeout(r, 1_500));
  try {
    process.kill(-(child.pid as number), "SIGKILL");
  } catch {
    // the group is gone
  }
  return existsSync(out);
}

describe("npm scripts", () => {
  it("run every TypeScript entry with `node --import tsx`", () => {
    const commands = typescriptCommands();
    expect(commands.map(([name]) => name)).toEqual(
      expect.arrayContaining(["start", "bench", "soak", "test:faults", "test:etcd-matrix"]),
    );
    for (const [name, launcher, file] of commands)
      expect([name, launcher, file]).toEqual([name, "node --import tsx", file]);
  });

  it("so a busy harness gets to clean up on Ctrl-C, which the tsx CLI does not wait for", async () => {
    expect(await cleansUpOnCtrlC(["node", "--import", "tsx"], "import")).toBe(true);
    // The tsx CLI relays the signal, waits 30 ms for the child to acknowledge it, then SIGKILLs
    // it: a harness killed so leaves etcd and the heartbeats (their own process groups) running.
    expect(await cleansUpOnCtrlC([join(ROOT, "node_modules/.bin/tsx")], "cli")).toBe(false);
  }, 60_000);
});
