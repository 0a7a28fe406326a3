import { describe, expect, it } from "vitest";
import { checkOrigin, MAX_HOST_CHARS, originProblem } from "../../../core/contract/origin-check.js";

describe("checkOrigin", () => {
  it("normalizes a bare origin: any case, a trailing slash, a default port", () => {
    expect(checkOrigin("HTTPS://Fra-1.Example.NET:443/")).toEqual({
      ok: true,
      origin: "https://fra-1.example.net",
    });
    expect(checkOrigin("http://127.0.0.1:8080")).toEqual({
      ok: true,
      origin: "http://127.0.0.1:8080",
    });
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
      expect(checkOrigin(s), s).toEqual({ ok: false, problem });
      expect(originProblem(s), s).toBe(problem);
    }
    expect(originProblem("https://fra-1.example.net")).toBeNull();
  });
});
