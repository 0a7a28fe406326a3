import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const ENTRY = fileURLToPath(new URL("../../worker/index.ts", import.meta.url));

/** Every file esbuild pulls into the Worker bundle, with the settings wrangler uses. */
async function bundleInputs(): Promise<string[]> {
  const r = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    metafile: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    mainFields: ["module", "main"],
    conditions: ["workerd", "worker", "browser", "import"],
    logLevel: "silent",
  });
  return Object.keys(r.metafile.inputs);
}

describe("the Worker bundle stays a router's size", () => {
  it("pulls in no zod and none of core's zod schemas (full validation is the pusher's)", async () => {
    const inputs = await bundleInputs();
    expect(inputs.filter((f) => f.includes("node_modules/zod/"))).toEqual([]);
    expect(
      inputs.filter((f) => /core\/(index|schema|map-schema|desired-state)\.ts$/.test(f)),
    ).toEqual([]);
    expect(inputs).toContain("core/contract/map-shape.ts");
  });

  it("signs origin requests with Web Crypto: no hash library is bundled", async () => {
    const inputs = await bundleInputs();
    expect(inputs).toContain("core/contract/edge-signature.ts");
    expect(inputs.filter((f) => f.includes("node_modules/@noble/"))).toEqual([]);
  });

  it("reads players' CMCD with its own reader: no structured-field or CMCD library is bundled", async () => {
    const inputs = await bundleInputs();
    expect(inputs).toContain("worker/observe/cmcd-readings.ts");
    expect(inputs.filter((f) => f.includes("node_modules/@svta/"))).toEqual([]);
  });
});
