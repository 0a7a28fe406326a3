import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";

const run = promisify(execFile);
const WRAPPER = resolve(import.meta.dirname, "../../deploy/with-credentials.sh");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A stand-in for systemd's $CREDENTIALS_DIRECTORY holding the given files. */
function credentials(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "creds-"));
  dirs.push(dir);
  for (const [name, value] of Object.entries(files)) {
    writeFileSync(join(dir, name), value);
    chmodSync(join(dir, name), 0o400);
  }
  return dir;
}

/** Runs the wrapper around `node -e` printing the environment and argv it was given. */
async function wrapped(env: Record<string, string>, ...args: string[]) {
  const { stdout } = await run(
    "sh",
    [
      WRAPPER,
      process.execPath,
      "-e",
      "console.log(JSON.stringify({ env: process.env, argv: process.argv.slice(1) }))",
      ...args,
    ],
    { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env } },
  );
  return JSON.parse(stdout) as { env: Record<string, string>; argv: string[] };
}

describe("deploy/with-credentials.sh (the units' ExecStart helper)", () => {
  it("exports credentials named like variables, without their trailing newline; leaves others as files", async () => {
    const dir = credentials({
      CF_API_TOKEN: "tok-abc 123\n",
      ETCD_PASSWORD: "p@ss:word$1",
      "etcd-client-key.pem": "-----BEGIN KEY-----\n",
      "1NOT_A_NAME": "x",
      lower_case: "y",
    });
    const { env, argv } = await wrapped({ CREDENTIALS_DIRECTORY: dir }, "heartbeat", "fra-1");
    expect(env.CF_API_TOKEN).toBe("tok-abc 123");
    expect(env.ETCD_PASSWORD).toBe("p@ss:word$1");
    expect(Object.keys(env)).not.toContain("etcd-client-key.pem");
    expect(Object.keys(env)).not.toContain("1NOT_A_NAME");
    expect(Object.keys(env)).not.toContain("lower_case");
    // The command keeps its own arguments, and no secret is among them.
    expect(argv).toEqual(["heartbeat", "fra-1"]);
  });

  it("runs the command unchanged without a credentials directory", async () => {
    const { env, argv } = await wrapped({}, "status", "json");
    expect(env.CF_API_TOKEN).toBeUndefined();
    expect(argv).toEqual(["status", "json"]);
  });
});
