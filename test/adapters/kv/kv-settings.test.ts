import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { inspect } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../../adapters/errors.js";
import { kvSettingsFromEnv } from "../../../adapters/kv/kv-settings.js";
import { Secret } from "../../../adapters/kv/secret.js";

const TOKEN = "tok-SECRET-5f0c2a9e-not-for-logs";
const ACCOUNT = "0123456789abcdef0123456789abcdef";
const NAMESPACE = "fedcba9876543210fedcba9876543210";
const dirs: string[] = [];

function project(toml: string | null): string {
  const dir = mkdtempSync(join(tmpdir(), "kv-settings-"));
  dirs.push(dir);
  if (toml !== null) writeFileSync(join(dir, "wrangler.toml"), toml);
  return dir;
}

const WRANGLER = `name = "x"\n[[kv_namespaces]]\nbinding = "OTHER"\nid = "1111"\n\n[[kv_namespaces]]\nbinding = "ROUTING"\nid = "abc123def456"\n`;

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error("expected a ConfigError");
}

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("kvSettingsFromEnv", () => {
  it("defaults to the local sink, .wrangler/state under cwd, and the ROUTING id from wrangler.toml", () => {
    const cwd = project(WRANGLER);
    expect(kvSettingsFromEnv({}, { cwd })).toEqual({
      kind: "local",
      persistDir: resolve(cwd, ".wrangler/state"),
      namespaceId: "abc123def456",
    });
  });

  it("reads the repository's own wrangler.toml", () => {
    const s = kvSettingsFromEnv({}, { cwd: resolve(import.meta.dirname, "../../..") });
    expect(s).toMatchObject({ namespaceId: "00000000000000000000000000000000" });
  });

  it("resolves KV_LOCAL_PERSIST against cwd and keeps absolute paths", () => {
    const cwd = project(WRANGLER);
    const rel = kvSettingsFromEnv({ KV_LOCAL_PERSIST: "state/dir" }, { cwd });
    expect(rel).toMatchObject({ kind: "local", persistDir: join(cwd, "state/dir") });
    const abs = kvSettingsFromEnv({ KV_LOCAL_PERSIST: "/var/tmp/x" }, { cwd });
    expect(abs).toMatchObject({ persistDir: "/var/tmp/x" });
  });

  it("KV_NAMESPACE_ID overrides wrangler.toml, and wrangler.toml is then not needed", () => {
    const cwd = project(null);
    expect(kvSettingsFromEnv({ KV_NAMESPACE_ID: "ns-1" }, { cwd })).toMatchObject({
      namespaceId: "ns-1",
    });
  });

  it("KV_SINK=file writes under KV_FILE_DIR (default /var/lib/edge-router), resolved against cwd, no wrangler.toml needed", () => {
    const cwd = project(null);
    expect(kvSettingsFromEnv({ KV_SINK: "file" }, { cwd })).toEqual({
      kind: "file",
      dir: "/var/lib/edge-router",
    });
    expect(kvSettingsFromEnv({ KV_SINK: "file", KV_FILE_DIR: "snap" }, { cwd })).toEqual({
      kind: "file",
      dir: join(cwd, "snap"),
    });
  });

  it("rejects an unknown KV_SINK, naming the variable", () => {
    const e = configError(() =>
      kvSettingsFromEnv({ KV_SINK: "redis" }, { cwd: project(WRANGLER) }),
    );
    expect(e.code).toBe("invalid-setting");
    expect(e.setting).toBe("KV_SINK");
    expect(e.message).toContain("redis");
  });

  it("reports a missing wrangler.toml or ROUTING binding under KV_NAMESPACE_ID", () => {
    const none = configError(() => kvSettingsFromEnv({}, { cwd: project(null) }));
    expect(none).toMatchObject({ code: "unreadable-file", setting: "KV_NAMESPACE_ID" });
    const noBinding = configError(() =>
      kvSettingsFromEnv(
        {},
        { cwd: project(`name = "x"\n[[kv_namespaces]]\nbinding = "X"\nid = "1"\n`) },
      ),
    );
    expect(noBinding).toMatchObject({ code: "missing-setting", setting: "KV_NAMESPACE_ID" });
    const broken = configError(() => kvSettingsFromEnv({}, { cwd: project("name = ") }));
    expect(broken).toMatchObject({ code: "unreadable-file", setting: "KV_NAMESPACE_ID" });
  });

  it("requires CF_ACCOUNT_ID and CF_API_TOKEN for cloudflare, naming each, never printing the token", () => {
    const cwd = project(WRANGLER);
    const noAccount = configError(() =>
      kvSettingsFromEnv({ KV_SINK: "cloudflare", CF_API_TOKEN: TOKEN }, { cwd }),
    );
    expect(noAccount).toMatchObject({ code: "missing-setting", setting: "CF_ACCOUNT_ID" });
    expect(noAccount.message).not.toContain(TOKEN);
    const noToken = configError(() =>
      kvSettingsFromEnv(
        { KV_SINK: "cloudflare", CF_ACCOUNT_ID: ACCOUNT, CF_API_TOKEN: "  " },
        { cwd },
      ),
    );
    expect(noToken).toMatchObject({ code: "missing-setting", setting: "CF_API_TOKEN" });
    const badBase = configError(() =>
      kvSettingsFromEnv(
        {
          KV_SINK: "cloudflare",
          CF_ACCOUNT_ID: ACCOUNT,
          CF_API_TOKEN: TOKEN,
          KV_NAMESPACE_ID: NAMESPACE,
          CF_API_BASE_URL: "ftp://x",
        },
        { cwd },
      ),
    );
    expect(badBase).toMatchObject({ code: "invalid-setting", setting: "CF_API_BASE_URL" });
    expect(badBase.message).not.toContain(TOKEN);
  });

  it("builds cloudflare settings whose token does not print", () => {
    const cwd = project(WRANGLER);
    const s = kvSettingsFromEnv(
      {
        KV_SINK: "cloudflare",
        CF_ACCOUNT_ID: ACCOUNT,
        CF_API_TOKEN: TOKEN,
        KV_NAMESPACE_ID: NAMESPACE,
        CF_API_BASE_URL: "http://127.0.0.1:1/client/v4",
      },
      { cwd },
    );
    if (s.kind !== "cloudflare") throw new Error("expected cloudflare settings");
    expect(s).toMatchObject({
      accountId: ACCOUNT,
      namespaceId: NAMESPACE,
      apiBaseUrl: "http://127.0.0.1:1/client/v4",
    });
    expect(s.apiToken).toBeInstanceOf(Secret);
    expect(s.apiToken.reveal()).toBe(TOKEN);
    expect(JSON.stringify(s)).not.toContain(TOKEN);
    expect(inspect(s, { depth: 5 })).not.toContain(TOKEN);
    expect(`${s.apiToken}`).not.toContain(TOKEN);
  });

  it("refuses a cloudflare id of the wrong shape (32 hex), naming the variable", () => {
    const cwd = project(WRANGLER);
    const env = { KV_SINK: "cloudflare", CF_API_TOKEN: TOKEN };
    const account = configError(() =>
      kvSettingsFromEnv({ ...env, CF_ACCOUNT_ID: "acc1", KV_NAMESPACE_ID: NAMESPACE }, { cwd }),
    );
    expect(account).toMatchObject({ code: "invalid-setting", setting: "CF_ACCOUNT_ID" });
    expect(account.message).toContain("32 hexadecimal characters");
    const namespace = configError(() =>
      kvSettingsFromEnv(
        { ...env, CF_ACCOUNT_ID: ACCOUNT, KV_NAMESPACE_ID: `${NAMESPACE}0` },
        { cwd },
      ),
    );
    expect(namespace).toMatchObject({ code: "invalid-setting", setting: "KV_NAMESPACE_ID" });
    // the wrangler.toml id (not 32 hex) is refused for cloudflare too, while the local sink takes it
    const fromToml = configError(() =>
      kvSettingsFromEnv({ ...env, CF_ACCOUNT_ID: ACCOUNT }, { cwd }),
    );
    expect(fromToml).toMatchObject({ code: "invalid-setting", setting: "KV_NAMESPACE_ID" });
    expect(fromToml.message).not.toContain(TOKEN);
  });

  it("refuses deploy/pusher.env.example's placeholders, naming the variable and the file to edit", () => {
    const example = readFileSync(
      resolve(import.meta.dirname, "../../../deploy/pusher.env.example"),
      "utf8",
    );
    const env = Object.fromEntries(
      example
        .split("\n")
        .filter((l) => /^[A-Z_]+=/.test(l))
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    expect(env.KV_SINK).toBe("cloudflare");
    const cwd = project(WRANGLER);
    const first = configError(() => kvSettingsFromEnv({ ...env, CF_API_TOKEN: TOKEN }, { cwd }));
    expect(first).toMatchObject({ code: "placeholder-setting", setting: "CF_ACCOUNT_ID" });
    expect(first.message).toContain("/etc/edge-router/pusher.env");
    const second = configError(() =>
      kvSettingsFromEnv({ ...env, CF_API_TOKEN: TOKEN, CF_ACCOUNT_ID: ACCOUNT }, { cwd }),
    );
    expect(second).toMatchObject({ code: "placeholder-setting", setting: "KV_NAMESPACE_ID" });
    expect(second.message).toContain("/etc/edge-router/pusher.env");
  });

  it("refuses the repository wrangler.toml's local namespace id for cloudflare, naming wrangler.toml", () => {
    const root = resolve(import.meta.dirname, "../../..");
    const e = configError(() =>
      kvSettingsFromEnv(
        { KV_SINK: "cloudflare", CF_API_TOKEN: TOKEN, CF_ACCOUNT_ID: ACCOUNT },
        { cwd: root },
      ),
    );
    expect(e).toMatchObject({ code: "placeholder-setting", setting: "KV_NAMESPACE_ID" });
    expect(e.message).toContain(resolve(root, "wrangler.toml"));
  });
});
