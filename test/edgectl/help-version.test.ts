import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createCliOutput } from "../../edgectl/output/cli-output.js";
import { buildProgram } from "../../edgectl/program.js";
import { runBin, runCli } from "./cli-harness.js";

const pkg = JSON.parse(
  readFileSync(resolve(import.meta.dirname, "../../package.json"), "utf8"),
) as { version: string };

const COMMANDS = [
  "validate",
  "plan",
  "apply",
  "export",
  "explain",
  "boost",
  "unboost",
  "heartbeat",
  "observe",
  "purge",
  "status",
  "completion",
];

describe("edgectl --version", () => {
  it("prints package.json's version, in-process and from the built dist/ bundle", async () => {
    for (const flag of ["--version", "-V"]) {
      const r = await runCli([flag], { env: {} });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${pkg.version}\n`);
    }
    const bin = await runBin(["--version"], {});
    expect(bin.code, bin.stderr).toBe(0);
    expect(bin.stdout).toBe(`${pkg.version}\n`);
    // the build inlines the version alone, not the whole package.json
    // edgectl.js and the chunks it shares with the pusher (the version is one of them)
    const dist = resolve(import.meta.dirname, "../../dist");
    const bundle = ["edgectl.js", ...readdirSync(resolve(dist, "chunks")).map((f) => `chunks/${f}`)]
      .filter((f) => f.endsWith(".js"))
      .map((f) => readFileSync(resolve(dist, f), "utf8"))
      .join("\n");
    expect(bundle).toContain(`var version = ${JSON.stringify(pkg.version)};`);
    // (bundled packages' own package.json may be inlined: grpc-js reads its version so)
    expect(bundle).not.toContain("allowScripts");
    expect(bundle).not.toContain("check:alerts");
  });
});

describe("edgectl COMMAND --help", () => {
  it("every command shows examples and the environment variables it reads", async () => {
    const io = { env: {}, stdout: { write: () => true }, stderr: { write: () => true } };
    const program = buildProgram(io, createCliOutput(io, "text"), () => {});
    // every command the program has, not only those this test knew of
    const all = program.commands.map((c) => c.name());
    expect(all).toEqual(expect.arrayContaining(COMMANDS));
    for (const cmd of all) {
      const r = await runCli([cmd, "--help"], { env: {} });
      expect(r.code, cmd).toBe(0);
      expect(r.stdout, cmd).toContain(`Usage: edgectl ${cmd}`);
      expect(r.stdout, cmd).toMatch(new RegExp(`\\nExamples:\\n  (source <\\()?edgectl ${cmd}`));
      expect(r.stdout, cmd).toContain("\nEnvironment:\n");
      expect(r.stdout, cmd).toContain("-o, --output <format>");
    }
  });

  it("names what each command reads: etcd for etcd commands, KV for explain and status", async () => {
    // the Environment section only (the options name their variables too)
    const help = async (cmd: string) =>
      (await runCli([cmd, "--help"], { env: {} })).stdout.split("\nEnvironment:\n")[1] ?? "";
    for (const cmd of [
      "plan",
      "apply",
      "export",
      "explain",
      "boost",
      "unboost",
      "heartbeat",
      "observe",
      "status",
    ])
      expect(await help(cmd), cmd).toContain("ETCD_ENDPOINTS");
    expect(await help("validate")).not.toContain("ETCD_ENDPOINTS");
    expect(await help("apply")).toContain("EDGECTL_LOCK_TTL");
    expect(await help("apply")).toContain("EDGECTL_MAX_TXN_OPS");
    for (const cmd of ["explain", "status"]) expect(await help(cmd), cmd).toContain("KV_SINK");
    expect(await help("status")).toContain("PUSHER_LISTEN");
    expect(await help("status")).toContain("HEARTBEAT_SECONDS");
  });

  it("edgectl --help lists -o, --version and completion", async () => {
    const r = await runCli(["--help"], { env: {} });
    expect(r.code).toBe(0);
    for (const s of ["-o, --output <format>", "-V, --version", "completion", "NO_COLOR"])
      expect(r.stdout).toContain(s);
  });
});
