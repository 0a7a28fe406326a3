import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../adapters/errors.js";
import { HostAllowList, parseAllowedHosts } from "../../adapters/host-allow-list.js";

const list = (listenHost: string, boundAddress: string, extra: string[] = []) =>
  new HostAllowList({ listenHost, boundAddress, extra, setting: "PUSHER_ALLOWED_HOSTS" });

describe("HostAllowList: the Host names a local listener answers to", () => {
  it("on loopback: its address and localhost, with or without port, in any case; nothing else", () => {
    const l = list("127.0.0.1", "127.0.0.1");
    for (const ok of ["127.0.0.1:9464", "127.0.0.1", "localhost:9464", "LocalHost", "localhost."])
      expect(l.allows(ok), ok).toBe(true);
    for (const bad of [
      "evil.example:9464",
      "evil.example",
      "127.0.0.1.evil.example",
      "localhost.evil.example:9464",
      "evil@127.0.0.1:9464",
      "127.0.0.1:9464/x",
      "127.0.0.2:9464",
      "",
      " ",
      "[::1]:9464",
      "lоcalhost", // a Cyrillic "о"
    ])
      expect(l.allows(bad), bad).toBe(false);
  });

  it("serves a request without Host (a browser always sends one)", () => {
    expect(list("127.0.0.1", "127.0.0.1").allows(undefined)).toBe(true);
  });

  it("compares IPv6 addresses in canonical form", () => {
    const l = list("::1", "::1");
    expect(l.allows("[::1]:9464")).toBe(true);
    expect(l.allows("[0:0:0:0:0:0:0:1]:9464")).toBe(true);
    expect(l.allows("localhost:9464")).toBe(true);
    expect(l.allows("[::2]:9464")).toBe(false);
  });

  it("on a named or public address: that name and address, and the extra names; no localhost", () => {
    const l = list("pusher-1.example.net", "192.0.2.10", ["scrape.example.net"]);
    expect(l.allows("pusher-1.example.net:9464")).toBe(true);
    expect(l.allows("192.0.2.10:9464")).toBe(true);
    expect(l.allows("scrape.example.net")).toBe(true);
    expect(l.allows("localhost:9464")).toBe(false);
    expect(l.allows("127.0.0.1:9464")).toBe(false);
  });

  it("on a wildcard address: the machine's host name, its interfaces (loopback too) and localhost", () => {
    const l = list("0.0.0.0", "0.0.0.0");
    expect(l.allows(`${hostname()}:9464`)).toBe(true);
    expect(l.allows("127.0.0.1:9464")).toBe(true);
    expect(l.allows("localhost")).toBe(true);
    expect(l.allows("evil.example:9464")).toBe(false);
  });

  it("parses PUSHER_ALLOWED_HOSTS: names and addresses, comma-separated; anything else is refused naming it", () => {
    expect(parseAllowedHosts("PUSHER_ALLOWED_HOSTS", undefined)).toEqual([]);
    expect(parseAllowedHosts("PUSHER_ALLOWED_HOSTS", " A.example.net , ,192.0.2.1,[::1]")).toEqual([
      "a.example.net",
      "192.0.2.1",
      "::1",
    ]);
    for (const bad of ["http://a.example.net", "a.example.net:9464", "a/b", "*", "a b"]) {
      const run = () => parseAllowedHosts("PUSHER_ALLOWED_HOSTS", bad);
      expect(run, bad).toThrow(ConfigError);
      expect(run, bad).toThrow("PUSHER_ALLOWED_HOSTS");
    }
  });
});
