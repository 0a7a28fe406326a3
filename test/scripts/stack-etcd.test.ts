import { describe, expect, it } from "vitest";
import { describeStackEtcd } from "../../scripts/stack/etcd.js";

const ROOT = "/work/edge-router/";
const base = { endpoint: "http://127.0.0.1:2379", reused: false } as const;

describe("describeStackEtcd", () => {
  it("names the version, the binary under .tools/ and that production would accept it", () => {
    expect(
      describeStackEtcd(
        { ...base, version: "3.7.3", binary: `${ROOT}.tools/etcd-v3.7.3/etcd` },
        ROOT,
      ),
    ).toBe("etcd 3.7.3 from .tools/etcd-v3.7.3/etcd: production would accept it");
  });

  it("says production would not accept Debian's 3.4.23, and why, yet that it does locally", () => {
    const line = describeStackEtcd({ ...base, version: "3.4.23", binary: "etcd" }, ROOT);
    expect(line).toMatch(
      /^etcd 3\.4\.23 from etcd: production would not \(3\.4 is out of support.*needs 3\.5\.33\+, 3\.6\.14\+, 3\.7\.1\+\); fine for local development$/,
    );
  });

  it("reports a reused etcd's version without a binary", () => {
    expect(
      describeStackEtcd({ ...base, reused: true, version: "3.6.16", binary: null }, ROOT),
    ).toBe("etcd 3.6.16: production would accept it");
    expect(describeStackEtcd({ ...base, reused: true, version: null, binary: null }, ROOT)).toBe(
      "etcd: version unknown",
    );
  });
});
