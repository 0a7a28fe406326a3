import { describe, expect, it } from "vitest";
import { takePathway } from "../../../worker/steer/pathway-param.js";

const U = "https://edge.example/live/v0.m3u8";

describe("takePathway (docs/reference.md §15)", () => {
  it.each([
    [`${U}`, null],
    [`${U}?token=a`, null],
    [`${U}?x_edge_pathway=fra-1`, null],
    [`${U}?edge_pathway=fra-1`, { pathway: "fra-1", url: U }],
    [`${U}?a=1&edge_pathway=fra-1&b=2`, { pathway: "fra-1", url: `${U}?a=1&b=2` }],
    [`${U}?Edge_Pathway=FRA-1`, { pathway: "fra-1", url: U }],
    [`${U}?edge%5Fpathway=ams-1&edge_pathway=fra-1`, { pathway: "ams-1", url: U }],
    [`${U}?edge_pathway`, { pathway: "", url: U }],
    [`${U}?edge_pathway=fra-1#t=3`, { pathway: "fra-1", url: `${U}#t=3` }],
    [`${U}?a=%E0%A4%A&edge_pathway=par-1`, { pathway: "par-1", url: `${U}?a=%E0%A4%A` }],
  ])("%s", (url, expected) => {
    expect(takePathway(url, "edge_pathway")).toEqual(expected);
  });

  it("keeps every other byte of the query as it was, encodings included", () => {
    const url = `${U}?sig=a%2Bb%3D&edge_pathway=fra-1&list=x,y&empty=&flag`;
    expect(takePathway(url, "edge_pathway")?.url).toBe(`${U}?sig=a%2Bb%3D&list=x,y&empty=&flag`);
  });

  it("follows STEER_PARAM", () => {
    expect(takePathway(`${U}?cdn=ams-1&edge_pathway=x`, "cdn")).toEqual({
      pathway: "ams-1",
      url: `${U}?edge_pathway=x`,
    });
  });
});
