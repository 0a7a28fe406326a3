import { describe, expect, it } from "vitest";
import { isAppPath } from "../../worker/app-path.js";

const at = (path: string) => isAppPath(`https://video.example.com${path}`);

describe("isAppPath: which requests the Hono router sees", () => {
  it("sends the /__edge namespace, and any path beside it, to the router", () => {
    for (const path of ["/__edge/health", "/__edge/route?x=1", "/__edge", "/__edge/", "/__edgex"])
      expect(at(path), path).toBe(true);
  });

  it("sends a percent-encoded path to the router, which decodes it before matching", () => {
    for (const path of ["/%5F_edge/route", "/__ed%67e/route", "/v/%E2%82%AC.ts"])
      expect(at(path), path).toBe(true);
  });

  it("proxies every other path without the router, whatever its query or fragment holds", () => {
    for (const path of [
      "/",
      "/video/segment-1.ts?q=1",
      "/v?next=%2F__edge%2Froute",
      "/v#%5F_edge",
      "/x/__edge/route",
      "/__EDGE/route",
    ])
      expect(at(path), path).toBe(false);
    expect(isAppPath("http://127.0.0.1:8787/v/1")).toBe(false);
  });
});
