import { describe, expect, it } from "vitest";
import { intVar, onUnlessOff, perEnv, secretVar } from "../../../core/contract/env-vars.js";

describe("env vars", () => {
  const range = { min: 10, max: 100, fallback: 30 };

  it("intVar: whole numbers clamped to the range, anything else the fallback", () => {
    expect(intVar("50", range)).toBe(50);
    expect(intVar(" 50\t", range)).toBe(50);
    expect(intVar("5", range)).toBe(10);
    expect(intVar("5000", range)).toBe(100);
    for (const raw of [undefined, 50, "", "-5", "5.5", "1e3", "0x10", "50s", "1234567890"])
      expect(intVar(raw, range)).toBe(30);
  });

  it("secretVar: the text when set and non-empty, else null", () => {
    expect(secretVar("s3cret")).toBe("s3cret");
    expect(secretVar(" ")).toBe(" ");
    expect(secretVar("")).toBeNull();
    expect(secretVar(undefined)).toBeNull();
    expect(secretVar(42)).toBeNull();
  });

  it("onUnlessOff: off only for `off`, in any case and with blanks", () => {
    for (const raw of ["off", "OFF", " Off "]) expect(onUnlessOff(raw)).toBe(false);
    for (const raw of [undefined, "", "on", "0", "false", "offline"])
      expect(onUnlessOff(raw)).toBe(true);
  });

  it("perEnv: parses each env object once, and a new object afresh", () => {
    let calls = 0;
    const parse = perEnv((env: { X?: string }) => {
      calls += 1;
      return { x: env.X ?? "none" };
    });
    const a = { X: "a" };
    const first = parse(a);
    expect(parse(a)).toBe(first);
    expect(calls).toBe(1);
    expect(parse({ X: "b" })).toEqual({ x: "b" });
    expect(calls).toBe(2);
  });
});
