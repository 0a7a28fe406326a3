import { describe, expect, it } from "vitest";
import {
  type CompiledMap,
  decodeSnapshot,
  describeViewerShed,
  viewerShedReports,
} from "../../../core/index.js";
import { P, snap } from "../../helpers/snapshot.js";

const state = decodeSnapshot(
  snap({
    "pool/fra-1": {
      origin: "https://fra-1.example.net",
      slow_ms: { low: 800, high: 2000 },
      viewers: true,
    },
    "observed/BR/fra-1": { p90_ms: 1400.4, samples: 240, error_ratio: 0 },
  }),
  P,
);
const AT = "2026-11-29T15:00:00.000Z";

describe("viewerShedReports: each country's shed by its viewers, with the figures", () => {
  it("reports the share, the viewers' p90 and samples, and the watermarks", () => {
    const map = { viewer_sheds: { BR: { "fra-1": { share: 50, at: AT } } } };
    const [br] = viewerShedReports(state, map);
    expect(br).toEqual({
      country: "BR",
      pool: "fra-1",
      share: 50,
      p90_ms: 1400,
      samples: 240,
      slow_ms: { low: 800, high: 2000 },
    });
    expect(br && describeViewerShed(br)).toBe(
      "BR on fra-1: viewers' p90 1400 ms over 240 requests, watermarks 800/2000 ms, shed by viewers 50 %",
    );
  });

  it("an aged-out observation: no figures, and says the shed is stepping down", () => {
    const map = { viewer_sheds: { AR: { "fra-1": { share: 30, at: AT } } } };
    const [ar] = viewerShedReports(state, map);
    expect(ar?.p90_ms).toBeNull();
    expect(ar?.samples).toBeNull();
    expect(ar && describeViewerShed(ar)).toBe(
      "AR on fra-1: no observation (too few viewers left to judge), stepping down, watermarks 800/2000 ms, shed by viewers 30 %",
    );
  });

  it("a map from KV naming anything but a country and a pool reports nothing of it", () => {
    const map = {
      viewer_sheds: {
        "\u001b[31mZZ": { "fra-1": { share: 50, at: AT } },
        BR: { "bad\u001b]pool": { share: 50, at: AT }, "fra-1": { share: "x" } },
      },
    } as unknown as Pick<CompiledMap, "viewer_sheds">;
    expect(viewerShedReports(state, map)).toEqual([]);
  });
});
