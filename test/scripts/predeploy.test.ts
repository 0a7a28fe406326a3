import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { wranglerPlaceholders } from "../../scripts/predeploy/wrangler-placeholders.js";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "predeploy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a command, resolving with its exit code and output whatever the code. */
async function exec(cmd: string, args: string[]) {
  try {
    const r = await run(cmd, args, {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

const template = readFileSync(join(ROOT, "wrangler.toml"), "utf8");

/** The committed wrangler.toml with a real-shaped id and real names in production. */
const filledIn = template
  .replace('id = "REPLACE_WITH_ROUTING_NAMESPACE_ID"', 'id = "4f1c0de5a2b34c6d8e9fa0b1c2d3e4f5"')
  .replaceAll("video.example.com", "video.acme-tv.net")
  .replaceAll("cdn.example.com", "cdn.acme-tv.net")
  .replaceAll('zone_name = "example.com"', 'zone_name = "acme-tv.net"')
  .replaceAll("https://{pool}.origin.example.com", "https://{pool}.origin.acme-tv.net");

describe("npm run deploy's predeploy check", () => {
  it("refuses the committed template's placeholder id before wrangler runs, naming wrangler.toml", async () => {
    const r = await exec("npm", ["run", "deploy", "--", "--dry-run"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`predeploy: ${join(ROOT, "wrangler.toml")} still holds`);
    expect(r.stderr).toMatch(
      /binding "ROUTING" id: "REPLACE_WITH_ROUTING_NAMESPACE_ID" is a template's placeholder/,
    );
    expect(r.stdout + r.stderr).not.toMatch(/wrangler deploy --env production/);
  });

  it("passes a wrangler.toml whose production section is filled in", async () => {
    const file = join(dir, "wrangler.toml");
    writeFileSync(file, filledIn);
    const r = await exec(process.execPath, ["--import", "tsx", "scripts/predeploy.ts", file]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("no placeholders");
  });
});

describe("wranglerPlaceholders", () => {
  const production = (p: Record<string, unknown>) => ({ env: { production: p } });

  it("names a namespace id of the wrong shape, all zeros, or missing", () => {
    for (const id of ["abc123", "00000000000000000000000000000000", `${"a".repeat(32)}b`]) {
      const found = wranglerPlaceholders(
        production({ kv_namespaces: [{ binding: "ROUTING", id }] }),
      );
      expect(found, id).toHaveLength(1);
      expect(found[0]).toContain('binding "ROUTING" id');
    }
    expect(wranglerPlaceholders(production({}))[0]).toContain("no id");
    expect(wranglerPlaceholders({})[0]).toContain("[env.production] is missing");
  });

  it("names routes and an ORIGIN_TEMPLATE on documentation domains, and nothing else", () => {
    const ok = { kv_namespaces: [{ binding: "ROUTING", id: "4f1c0de5a2b34c6d8e9fa0b1c2d3e4f5" }] };
    expect(
      wranglerPlaceholders(
        production({
          ...ok,
          routes: ["v.example.net/*", { pattern: "*.acme.test/*", zone_name: "acme.test" }],
          vars: { ORIGIN_TEMPLATE: "https://{pool}.example" },
        }),
      ),
    ).toHaveLength(4);
    expect(
      wranglerPlaceholders(
        production({
          ...ok,
          routes: [
            "v.example-tv.com/*",
            { pattern: "cdn.notexample.com/*", zone_name: "notexample.com" },
          ],
          vars: { ORIGIN_TEMPLATE: "https://{pool}.origin.example-tv.com" },
        }),
      ),
    ).toEqual([]);
  });
});
