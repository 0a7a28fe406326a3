import { describe, expect, it } from "vitest";
import {
  checkOrigin,
  IP_LITERAL_PROBLEM,
  LOOPBACK_WARNING,
  MAX_HOST_CHARS,
  originProblem,
} from "../../../core/contract/origin-check.js";

describe("checkOrigin", () => {
  it("normalizes a bare origin: any case, a trailing slash, a default port", () => {
    expect(checkOrigin("HTTPS://Fra-1.Example.NET:443/")).toEqual({
      ok: true,
      origin: "https://fra-1.example.net",
    });
    expect(checkOrigin("https://fra-1.example.net")).not.toHaveProperty("warning");
  });

  it("accepts a loopback origin with a warning that production cannot fetch it", () => {
    for (const [s, origin] of [
      ["http://127.0.0.1:8080", "http://127.0.0.1:8080"],
      ["http://[::1]:9101/", "http://[::1]:9101"],
      ["http://2130706433:9000", "http://127.0.0.1:9000"],
    ]) {
      expect(checkOrigin(s as string), s).toEqual({ ok: true, origin, warning: LOOPBACK_WARNING });
    }
    expect(LOOPBACK_WARNING).toMatch(/Worker in production cannot fetch/);
  });

  it("refuses any other IP-literal origin with its own code, naming error 1003", () => {
    for (const s of ["https://203.0.113.7", "http://10.0.0.1:9000/", "https://[2001:db8::1]"]) {
      expect(checkOrigin(s), s).toEqual({
        ok: false,
        code: "ip-literal-origin",
        problem: IP_LITERAL_PROBLEM,
      });
    }
    expect(IP_LITERAL_PROBLEM).toMatch(/IP-literal.*1003.*DNS name/);
  });

  it("names what is wrong with anything else", () => {
    const cases: Array<[string, string]> = [
      ["fra-1.example.net", "not an absolute URL"],
      ["ftp://fra-1.example.net", "scheme must be https: or http:"],
      ["https://user:pw@fra-1.example.net", "must not contain credentials"],
      ["https://fra-1.example.net/video", "must not have a path, query or fragment"],
      ["https://fra-1.example.net/./", "must not have a path, query or fragment"],
      ["https://fra-1.example.net?x=1", "must not have a path, query or fragment"],
      [`https://${"a.".repeat(127)}net`, `host name over ${MAX_HOST_CHARS} characters`],
      ["https://host:0", "port must be 1-65535"],
      ["http://fra-1.example.net:000/", "port must be 1-65535"],
    ];
    for (const [s, problem] of cases) {
      expect(checkOrigin(s), s).toEqual({ ok: false, code: "invalid-origin", problem });
      expect(originProblem(s), s).toBe(problem);
    }
    expect(originProblem("https://fra-1.example.net")).toBeNull();
  });
});
