import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../adapters/errors.js";
import { isLoopbackHost, kvSettingsFromEnv } from "../../../adapters/kv/kv-settings.js";

const TOKEN = "tok-SECRET-base-url-test";
const BASE = {
  KV_SINK: "cloudflare",
  CF_ACCOUNT_ID: "0123456789abcdef0123456789abcdef",
  CF_API_TOKEN: TOKEN,
  KV_NAMESPACE_ID: "fedcba9876543210fedcba9876543210",
};

function settingsWith(base: string) {
  return kvSettingsFromEnv({ ...BASE, CF_API_BASE_URL: base }, { cwd: "/nonexistent" });
}

describe("CF_API_BASE_URL: the API token is only ever sent over https, or plain http to loopback", () => {
  it.each([
    "https://api.cloudflare.com/client/v4",
    "https://kv-proxy.internal:8443/client/v4",
    "http://127.0.0.1:8787/client/v4",
    "http://127.9.8.7:1",
    "http://127.1:9000",
    "http://[::1]:9000/client/v4",
  ])("accepts %s", (base) => {
    expect(settingsWith(base)).toMatchObject({ kind: "cloudflare", apiBaseUrl: base });
  });

  it.each([
    "http://api.cloudflare.com/client/v4",
    "http://10.0.0.5:8080",
    "http://128.0.0.1",
    "http://127.0.0.1.example.com",
    "http://localhost.example.com",
    "http://[::2]:9000",
    // names, which Node resolves through DNS: the token could go anywhere in clear
    "http://kv.localhost/client/v4",
    "http://localhost:9000",
    "http://LOCALHOST:9000",
    "http://127.0.0.1.nip.io",
  ])("refuses %s, naming the variable and never the token", (base) => {
    let caught: unknown;
    try {
      settingsWith(base);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const err = caught as ConfigError;
    expect(err.code).toBe("invalid-setting");
    expect(err.setting).toBe("CF_API_BASE_URL");
    expect(err.message).toContain("must be https");
    expect(err.message).not.toContain(TOKEN);
  });

  it("still refuses a non-http(s) scheme as before", () => {
    expect(() => settingsWith("ftp://127.0.0.1/")).toThrow(/not an http\(s\) URL/);
  });

  it("isLoopbackHost knows literal 127.0.0.0/8 and [::1] only, never a name", () => {
    expect(["127.0.0.1", "127.255.255.254", "127.0.0.0", "[::1]"].every(isLoopbackHost)).toBe(true);
    expect(
      [
        "localhost",
        "a.localhost",
        "0.0.0.0",
        "127.0.0",
        "127.0.0.256",
        "1.127.0.0.1",
        "[::]",
        "localhost6",
        "example.com",
      ].some(isLoopbackHost),
    ).toBe(false);
  });

  it("the refusal says why a name is not loopback", () => {
    expect(() => settingsWith("http://kv.localhost/client/v4")).toThrow(
      /not to a name such as localhost/,
    );
  });
});
