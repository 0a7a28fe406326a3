import { describe, expect, it } from "vitest";
import { hostKind } from "../../../core/contract/ip-literal-host.js";

const kindOf = (url: string) => hostKind(new URL(url).hostname);

describe("hostKind", () => {
  it.each([
    ["https://fra-1.origin.example.com", "name"],
    ["http://localhost:9101", "name"],
    ["https://1.example", "name"],
    ["http://127.0.0.1:9101", "loopback-ip"],
    ["http://127.9.8.7", "loopback-ip"],
    ["http://2130706433", "loopback-ip"],
    ["http://0x7f.1", "loopback-ip"],
    ["http://[::1]:9101", "loopback-ip"],
    ["http://[0:0:0:0:0:0:0:1]", "loopback-ip"],
    ["http://[::ffff:127.0.0.1]", "loopback-ip"],
    ["https://203.0.113.7", "ip"],
    ["http://10.0.0.1:9000", "ip"],
    ["http://128.0.0.1", "ip"],
    ["http://3405803783", "ip"],
    ["https://[2001:db8::1]", "ip"],
    ["http://[::ffff:10.0.0.1]", "ip"],
    ["http://[::2]", "ip"],
  ])("%s → %s", (url, kind) => {
    expect(kindOf(url)).toBe(kind);
  });
});
