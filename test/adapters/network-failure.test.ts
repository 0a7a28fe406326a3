import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { causeChain, networkFailure } from "../../adapters/network-failure.js";
import {
  type Blackhole,
  type Origins,
  startBlackhole,
  startOrigins,
} from "../../testkit/origins.js";
import { freePort } from "../../testkit/ports.js";

let origins: Origins;
let blackhole: Blackhole;
beforeAll(async () => {
  [origins, blackhole] = await Promise.all([startOrigins(["plain-1"]), startBlackhole()]);
});
afterAll(async () => {
  await Promise.all([origins?.close(), blackhole?.close()]);
});

/** What a real `fetch` of `url` threw. */
async function fetchError(url: string, timeoutMs = 5_000): Promise<unknown> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    return e;
  }
  throw new Error(`${url} answered`);
}

describe("networkFailure: the whole cause chain of a real failed fetch", () => {
  it("a closed port is `connection refused`, naming the address, not `fetch failed`", async () => {
    const port = await freePort();
    const f = networkFailure(await fetchError(`http://127.0.0.1:${port}/`));
    expect(f.kind).toBe("refused");
    expect(f.text).toBe(`connection refused: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it("https to a plain-HTTP port is a TLS failure that says so", async () => {
    const plain = origins.get("plain-1").url.replace(/^http:/, "https:");
    const f = networkFailure(await fetchError(`${plain}/`));
    expect(f.kind).toBe("tls");
    expect(f.text).toBe("TLS handshake failed (a plain-HTTP port?): wrong version number");
  });

  it("a name that does not resolve is a DNS failure naming the host", async () => {
    const f = networkFailure(await fetchError("https://no-such-host.invalid/"));
    expect(f.kind).toBe("dns");
    expect(f.text).toMatch(
      /^DNS lookup failed: getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid$/,
    );
  });

  it("a deadline passed while nothing answered is `timed out`", async () => {
    const f = networkFailure(await fetchError(`${blackhole.url}/`, 200));
    expect(f.kind).toBe("timeout");
    expect(f.text).toMatch(/^timed out/);
  });

  it("reads each address a host name failed on, and stops at a cycle", () => {
    const a = Object.assign(new Error("connect ECONNREFUSED ::1:9"), { code: "ECONNREFUSED" });
    const b = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), {
      code: "ECONNREFUSED",
    });
    const outer = new TypeError("fetch failed", { cause: new AggregateError([a, b], "") });
    expect(networkFailure(outer).text).toBe(
      "connection refused: connect ECONNREFUSED ::1:9; connect ECONNREFUSED 127.0.0.1:9",
    );
    const loop: { message: string; cause?: unknown } = { message: "loop" };
    loop.cause = { message: "back", cause: loop };
    expect(causeChain(loop)).toHaveLength(2);
    expect(networkFailure(loop)).toEqual({ kind: "other", text: "loop" });
    expect(networkFailure("not an error")).toEqual({ kind: "other", text: "network error" });
  });
});
