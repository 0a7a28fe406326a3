import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const TUNING = resolve(import.meta.dirname, "../../bin/pusher-tuning.js");
const dir = mkdtempSync(join(tmpdir(), "pusher-tuning-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs a script that calls `tunePusherProcess()` the way bin/edge-pusher.js does, printing its
 * PID before (stderr) and its PID and environment after (stdout).
 */
async function tuned(env: Record<string, string>) {
  const script = `import { tunePusherProcess } from ${JSON.stringify(TUNING)};
process.stderr.write(String(process.pid));
tunePusherProcess();
process.stdout.write(JSON.stringify({ pid: process.pid, arena: process.env.MALLOC_ARENA_MAX ?? null, mmap: process.env.MALLOC_MMAP_THRESHOLD_ ?? null, marker: process.env.EDGE_PUSHER_TUNED ?? null, argv: process.argv.slice(2), gc: typeof globalThis.gc }));`;
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

describe("bin/pusher-tuning.js (the pusher's malloc settings and V8 flags)", () => {
  const hasExecve = typeof process.execve === "function";

  it.runIf(hasExecve)("re-executes once in the same process with the malloc settings", async () => {
    const r = await tuned({});
    expect(r.arena).toBe("2");
    expect(r.mmap).toBe("65536");
    expect(r.marker).toBe("1");
    expect(r.startsSeen).toBe(2);
    expect(r.argv).toEqual(["extra-arg"]);
    // V8's gc, for the pusher's idle heap trim (pusher/idle-heap-trim.ts)
    expect(r.gc).toBe("function");
  });

  it.runIf(hasExecve)("keeps the operator's own values", async () => {
    const r = await tuned({ MALLOC_ARENA_MAX: "4" });
    expect(r.arena).toBe("4");
    expect(r.mmap).toBe("65536");
  });

  it("does nothing when EDGE_PUSHER_TUNED is set", async () => {
    const r = await tuned({ EDGE_PUSHER_TUNED: "0" });
    expect(r.arena).toBeNull();
    expect(r.startsSeen).toBe(1);
    expect(r.gc).toBe("undefined");
  });
});
