import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  deployedEnvironment,
  deployedNodeOptions,
} from "../../../bench/lib/deployed-environment.js";

const dir = mkdtempSync(join(tmpdir(), "deployed-environment-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("deployedEnvironment: the pusher unit's variables, as systemd reads them", () => {
  it("takes quoted and unquoted assignments, several per line, and leaves out specifiers", () => {
    const unit = join(dir, "x.service");
    writeFileSync(
      unit,
      [
        "[Service]",
        'Environment="NODE_OPTIONS=--max-old-space-size=128 --expose-gc"',
        "Environment=A=1 B=two",
        "Environment=NODE_COMPILE_CACHE=%C/edge-pusher",
        "#Environment=COMMENTED=1",
        "EnvironmentFile=/etc/edge-router/pusher.env",
      ].join("\n"),
    );
    expect(deployedEnvironment(unit)).toEqual({
      NODE_OPTIONS: "--max-old-space-size=128 --expose-gc",
      A: "1",
      B: "two",
    });
    expect(deployedNodeOptions(unit)).toBe("--max-old-space-size=128 --expose-gc");
  });

  it("reads deploy/edge-pusher.service: heap bounds, the exposed gc and malloc's settings", () => {
    const env = deployedEnvironment();
    expect(env.NODE_OPTIONS?.split(" ")).toEqual(
      expect.arrayContaining(["--max-old-space-size=128", "--expose-gc"]),
    );
    expect(env.MALLOC_ARENA_MAX).toBe("2");
    expect(env.MALLOC_MMAP_THRESHOLD_).toBe("65536");
    expect(env.NODE_COMPILE_CACHE).toBeUndefined();
  });
});
