import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { MINIFLARE_PACKAGE } from "../../adapters/kv/local-sink.js";

const ROOT = resolve(import.meta.dirname, "../..");
interface Manifest {
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}
const read = (path: string) => JSON.parse(readFileSync(resolve(ROOT, path), "utf8")) as Manifest;
const pkg = read("package.json");
const wrangler = read("node_modules/wrangler/package.json");

describe("package.json keeps the toolchain together", () => {
  it("the local sink names the miniflare the project installs, which is wrangler's own", () => {
    expect(MINIFLARE_PACKAGE).toBe(`miniflare@${pkg.devDependencies?.miniflare}`);
    expect(wrangler.dependencies?.miniflare).toBe(pkg.devDependencies?.miniflare);
  });

  it("the Node the project installs for itself is 24, inside engines", () => {
    expect(pkg.engines?.node).toBe(">=22.12");
    expect(pkg.devDependencies?.node).toMatch(/^24\.\d+\.\d+$/);
  });

  it("has no production dependencies: the bins' packages are bundled into dist/", () => {
    // scripts/node-bundle.ts; test/scripts/node-bundle.test.ts checks the bundles themselves.
    expect(pkg.dependencies ?? {}).toEqual({});
    for (const dev of ["tsx", "miniflare", "wrangler", "esbuild", "hono", "node", "etcd3"]) {
      expect(Object.keys(pkg.devDependencies ?? {}), dev).toContain(dev);
    }
  });
});
