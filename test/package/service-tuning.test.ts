import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { Command } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import {
  EDGECTL_VALUE_OPTIONS,
  edgectlCommand,
  HEARTBEAT_TUNED,
  PUSHER_TUNED,
} from "../../bin/service-tuning.js";
import { withCommonOptions } from "../../edgectl/output/command-context.js";

const run = promisify(execFile);
const TUNING = resolve(import.meta.dirname, "../../bin/service-tuning.js");
const dir = mkdtempSync(join(tmpdir(), "service-tuning-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs a script that calls `tuneServiceProcess(marker)` the way the bins do, printing its PID
 * before (stderr) and its PID and environment after (stdout).
 */
async function tuned(env: Record<string, string>, marker: string = PUSHER_TUNED) {
  const script = `import { tuneServiceProcess } from ${JSON.stringify(TUNING)};
process.stderr.write(String(process.pid));
tuneServiceProcess(${JSON.stringify(marker)});
process.stdout.write(JSON.stringify({ pid: process.pid, arena: process.env.MALLOC_ARENA_MAX ?? null, mmap: process.env.MALLOC_MMAP_THRESHOLD_ ?? null, marker: process.env[${JSON.stringify(marker)}] ?? null, argv: process.argv.slice(2), gc: typeof globalThis.gc }));`;
  const file = join(dir, "bin.mjs");
  writeFileSync(file, script);
  const { stdout, stderr } = await run(process.execPath, [file, "extra-arg"], {
    env: { PATH: process.env.PATH ?? "", ...env },
    timeout: 20_000,
  });
  const after = JSON.parse(stdout) as {
    pid: number;
    arena: string | null;
    mmap: string | null;
    marker: string | null;
    argv: string[];
    gc: string;
  };
  // Before the re-exec the script printed its PID once; a re-executed process prints it again.
  return { ...after, startsSeen: stderr.split(String(after.pid)).length - 1 };
}

describe("bin/service-tuning.js (the services' malloc settings and V8 flags)", () => {
  const hasExecve = typeof process.execve === "function";

  it.runIf(hasExecve)("re-executes once in the same process with the malloc settings", async () => {
    const r = await tuned({});
    expect(r.arena).toBe("2");
    expect(r.mmap).toBe("65536");
    expect(r.marker).toBe("1");
    expect(r.startsSeen).toBe(2);
    expect(r.argv).toEqual(["extra-arg"]);
    // V8's gc, for the idle heap trim (adapters/idle-heap-trim.ts)
    expect(r.gc).toBe("function");
  });

  it.runIf(hasExecve)("keeps the operator's own values", async () => {
    const r = await tuned({ MALLOC_ARENA_MAX: "4" });
    expect(r.arena).toBe("4");
    expect(r.mmap).toBe("65536");
  });

  it.runIf(hasExecve)("starts once when the units' settings are already there", async () => {
    const settings = {
      MALLOC_ARENA_MAX: "3",
      MALLOC_MMAP_THRESHOLD_: "131072",
      NODE_OPTIONS: "--expose-gc",
    };
    for (const marker of [PUSHER_TUNED, HEARTBEAT_TUNED]) {
      const r = await tuned(settings, marker);
      expect(r.startsSeen).toBe(1);
      expect(r.marker).toBeNull();
      expect([r.arena, r.mmap, r.gc]).toEqual(["3", "131072", "function"]);
    }
    // Each setting alone is not enough: the missing one is added by a re-execution.
    const { NODE_OPTIONS: _, ...mallocOnly } = settings;
    const noGc = await tuned(mallocOnly);
    expect([noGc.startsSeen, noGc.gc]).toEqual([2, "function"]);
    const noMmap = await tuned({ MALLOC_ARENA_MAX: "3", NODE_OPTIONS: "--expose-gc" });
    expect([noMmap.startsSeen, noMmap.mmap]).toEqual([2, "65536"]);
  });

  it("does nothing when the marker is set: EDGE_PUSHER_TUNED, EDGE_HEARTBEAT_TUNED", async () => {
    for (const marker of [PUSHER_TUNED, HEARTBEAT_TUNED]) {
      const r = await tuned({ [marker]: "0" }, marker);
      expect(r.arena).toBeNull();
      expect(r.startsSeen).toBe(1);
      expect(r.gc).toBe("undefined");
    }
  });
});

describe("edgectlCommand: which command bin/edgectl.js runs (the heartbeat is tuned)", () => {
  it("skips options and their values", () => {
    expect(edgectlCommand(["heartbeat", "fra-1"])).toBe("heartbeat");
    expect(edgectlCommand(["--endpoints", "http://a:2379", "heartbeat", "fra-1"])).toBe(
      "heartbeat",
    );
    expect(edgectlCommand(["-o", "json", "--debug", "heartbeat"])).toBe("heartbeat");
    expect(edgectlCommand(["--prefix=/x/", "status"])).toBe("status");
    expect(edgectlCommand(["--prefix", "heartbeat", "status"])).toBe("status");
    expect(edgectlCommand(["--help"])).toBeUndefined();
  });

  it("knows every option of edgectl's that takes a value", () => {
    const taking = withCommonOptions(new Command("edgectl"))
      .options.filter((o) => o.required || o.optional)
      .flatMap((o) => [o.short, o.long].filter((f): f is string => f !== undefined));
    expect([...EDGECTL_VALUE_OPTIONS].sort()).toEqual(taking.sort());
  });
});
