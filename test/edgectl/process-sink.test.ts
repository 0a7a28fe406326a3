import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { spawnBin, tempFiles } from "./cli-harness.js";

/** Runs the bin with one of its output pipes closed before it writes (`edgectl … | head -0`). */
async function withClosedPipe(argv: readonly string[], closed: "stdout" | "stderr") {
  const child = spawnBin(argv, {});
  child[closed]?.destroy();
  const open = closed === "stdout" ? child.stderr : child.stdout;
  let text = "";
  open?.on("data", (d: Buffer) => (text += d.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, text };
}

describe("edgectl with a reader that has gone away", () => {
  it("--help into a closed pipe exits 0 without an EPIPE trace", async () => {
    const r = await withClosedPipe(["--help"], "stdout");
    expect(r.text).toBe("");
    expect(r.code).toBe(0);
  });

  it("a failing command keeps its exit code when stderr is closed", async () => {
    const files = tempFiles();
    try {
      const bad = files.write("routes:\n  DE: [nope\n");
      const r = await withClosedPipe(["validate", bad], "stderr");
      expect(r.code).toBe(1);
      expect(r.text).toBe("");
    } finally {
      files.cleanup();
    }
  });
});
