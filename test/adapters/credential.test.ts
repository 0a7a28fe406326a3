import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readCredential } from "../../adapters/credential.js";
import { ConfigError } from "../../adapters/errors.js";
import { etcdSettingsFromEnv } from "../../adapters/etcd-options.js";
import { kvSettingsFromEnv } from "../../adapters/kv/kv-settings.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A stand-in for systemd's $CREDENTIALS_DIRECTORY holding the given files (mode 0400). */
function credentials(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "creds-"));
  dirs.push(dir);
  for (const [name, value] of Object.entries(files)) {
    writeFileSync(join(dir, name), value);
    chmodSync(join(dir, name), 0o400);
  }
  return dir;
}

describe("readCredential ($CREDENTIALS_DIRECTORY, read by the process itself)", () => {
  it("reads the file named like the setting, dropping one trailing newline; a variable wins", () => {
    const dir = credentials({ ETCD_PASSWORD: "p@ss:word$1\n", CF_API_TOKEN: "tok\r\n" });
    expect(readCredential({ CREDENTIALS_DIRECTORY: dir }, "ETCD_PASSWORD")).toBe("p@ss:word$1");
    expect(readCredential({ CREDENTIALS_DIRECTORY: dir }, "CF_API_TOKEN")).toBe("tok");
    expect(
      readCredential({ CREDENTIALS_DIRECTORY: dir, ETCD_PASSWORD: "env" }, "ETCD_PASSWORD"),
    ).toBe("env");
    expect(readCredential({ CREDENTIALS_DIRECTORY: dir }, "OBSERVE_TOKEN")).toBeUndefined();
    expect(readCredential({}, "ETCD_PASSWORD")).toBeUndefined();
  });

  it("names the credential it cannot read, never its content", () => {
    const dir = credentials({ ETCD_PASSWORD: "secret" });
    chmodSync(join(dir, "ETCD_PASSWORD"), 0o000);
    if (process.getuid?.() === 0) return; // root reads any file
    expect(() => readCredential({ CREDENTIALS_DIRECTORY: dir }, "ETCD_PASSWORD")).toThrow(
      ConfigError,
    );
  });

  it("feeds the etcd and KV settings, so neither secret needs an environment variable", () => {
    const dir = credentials({ ETCD_PASSWORD: "etcd-pw\n", CF_API_TOKEN: "cf-token\n" });
    const etcd = etcdSettingsFromEnv({ CREDENTIALS_DIRECTORY: dir, ETCD_USERNAME: "edge-pusher" });
    expect(etcd.password).toBe("etcd-pw");
    const kv = kvSettingsFromEnv(
      {
        CREDENTIALS_DIRECTORY: dir,
        KV_SINK: "cloudflare",
        CF_ACCOUNT_ID: "0123456789abcdef0123456789abcdef",
        KV_NAMESPACE_ID: "fedcba9876543210fedcba9876543210",
      },
      { cwd: "/nonexistent" },
    );
    if (kv.kind !== "cloudflare") throw new Error("expected cloudflare settings");
    expect(kv.apiToken.reveal()).toBe("cf-token");
  });
});
