import { describe, expect, it } from "vitest";
import { playerReport } from "../../../worker/observe/player-report.js";

const at = (path: string, headers: Record<string, string> = {}) =>
  playerReport(new Request(`https://edge.test${path}`, { headers }));

describe("playerReport (CMCD, CTA-5004)", () => {
  it("reads bs and mtp from the CMCD-* headers, in any spelling of their names", () => {
    expect(at("/s.m4s", { "cmcd-status": "bs", "CMCD-REQUEST": "mtp=25400,dl=18500" })).toEqual({
      starved: true,
      throughputKbps: 25400,
    });
    expect(at("/s.m4s", { "CMCD-Status": "bs=?0" }).starved).toBe(false);
  });

  it("reads the CMCD query parameter, which wins over headers", () => {
    const q = encodeURIComponent('bs,mtp=1200,sid="abc"');
    expect(at(`/s.m4s?x=1&CMCD=${q}#frag`, { "CMCD-Request": "mtp=9000" })).toEqual({
      starved: true,
      throughputKbps: 1200,
    });
  });

  it("takes a CMCD v2 inner-list mtp by its first item", () => {
    expect(at("/s.m4s", { "CMCD-Request": "mtp=(8500 7000)" }).throughputKbps).toBe(8500);
  });

  it("reads steering throughput (bit/s) when the player sends no mtp", () => {
    expect(at("/steer?_HLS_pathway=a&_HLS_throughput=4200000").throughputKbps).toBe(4200);
    expect(at("/steer?_DASH_throughput=800000").throughputKbps).toBe(800);
    expect(at("/steer?_HLS_throughput=lots").throughputKbps).toBeNull();
  });

  it("counts malformed or absurd CMCD as not sent", () => {
    expect(at("/s.m4s", { "CMCD-Status": 'bs,"open' })).toEqual({
      starved: null,
      throughputKbps: null,
    });
    expect(at("/s.m4s", { "CMCD-Request": "mtp=-5" }).throughputKbps).toBeNull();
    expect(at(`/s.m4s?CMCD=${encodeURIComponent("bs=5")}`).starved).toBeNull();
    expect(at("/s.m4s")).toEqual({ starved: null, throughputKbps: null });
  });
});
