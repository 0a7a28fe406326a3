import { describe, expect, it } from "vitest";
import { refreshUrlRange } from "../../worker/refresh-url.js";

/** The URL text `refreshUrlRange` finds, or `null`. */
const urlOf = (value: string) => {
  const range = refreshUrlRange(value);
  return range ? value.slice(range[0], range[1]) : null;
};

describe("refreshUrlRange: the URL of a Refresh value, as a browser finds it", () => {
  it.each([
    ["5; url=https://a.example/x", "https://a.example/x"],
    ["5;URL=/x", "/x"],
    ["0, url = 'https://a.example/x' trailing", "https://a.example/x"],
    ['0; url="/x', "/x"],
    ["0;https://a.example/x", "https://a.example/x"],
    ["0 https://a.example/x", "https://a.example/x"],
    ["  3.5 ; /x", "/x"],
    [".5;/x", "/x"],
    ["0; 'quoted'", "quoted"],
    // A partial "url" prefix: the whole remainder is the URL (HTML's "jump to parse").
    ["0; urx=/x", "urx=/x"],
    ["0; url /x", "url /x"],
    ["0; u/x", "u/x"],
  ])("%j → %j", (value, want) => {
    expect(urlOf(value)).toBe(want);
  });

  it.each(["", "url=/x", "x; url=/x", "5", "5; ", "5x; url=/x", "-1; url=/x"])(
    "%j names no URL",
    (value) => {
      expect(urlOf(value)).toBeNull();
    },
  );
});
