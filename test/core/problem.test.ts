import { describe, expect, it } from "vitest";
import { distinctProblems, type Problem } from "../../core/problem.js";

const p = (key: string, code: Problem["code"], message: string): Problem => ({
  key,
  code,
  message,
});

describe("distinctProblems", () => {
  it("drops repeats of key, code and message, keeps the first of each, in order", () => {
    const list = [
      p("country/DE", "dangling-reference", "pool x is not defined"),
      p("junk/a", "unknown-key", "not a routing key"),
      p("country/DE", "dangling-reference", "pool x is not defined"),
      p("country/DE", "dangling-reference", "pool y is not defined"),
      p("country/DE", "fence-crossing", "pool x is not defined"),
      p("junk/a", "unknown-key", "not a routing key"),
    ];
    expect(distinctProblems(list)).toEqual([list[0], list[1], list[3], list[4]]);
    expect(distinctProblems(list)[0]).toBe(list[0]);
  });
});
