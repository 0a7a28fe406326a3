import { describe, expect, it } from "vitest";
import { procStats } from "../../soak/proc-stats.js";

describe("/proc figures of a process", () => {
  it("RSS, its anonymous part (less than the whole) and open descriptors; null once gone", async () => {
    const st = await procStats(process.pid);
    expect(st?.anonMiB).toBeGreaterThan(0);
    expect(st?.anonMiB).toBeLessThan(st?.rssMiB ?? 0);
    expect(st?.fds).toBeGreaterThan(2);
    expect(await procStats(2 ** 22 + 1)).toBeNull();
  });
});
