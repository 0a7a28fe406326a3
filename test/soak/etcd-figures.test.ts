import { describe, expect, it } from "vitest";
import { memberFigures } from "../../soak/etcd-figures.js";

/** What etcd 3.4.23 and 3.5.16 expose (names checked by running them). */
const ETCD_34 = `# TYPE etcd_debugging_lease_granted_total counter
etcd_debugging_lease_granted_total 41
# TYPE etcd_debugging_lease_revoked_total counter
etcd_debugging_lease_revoked_total 11
# TYPE etcd_debugging_mvcc_watch_stream_total gauge
etcd_debugging_mvcc_watch_stream_total 3
# TYPE etcd_debugging_mvcc_watcher_total gauge
etcd_debugging_mvcc_watcher_total 4
`;

describe("etcd figures chosen by the metrics a member exposes", () => {
  it("3.4/3.5: leases held = granted − revoked; watchers and streams as gauges", () => {
    expect(memberFigures(ETCD_34)).toEqual({
      leases: 30,
      countsRecovered: false,
      watchers: 4,
      watchStreams: 3,
      names: [
        "etcd_debugging_lease_granted_total",
        "etcd_debugging_lease_revoked_total",
        "etcd_debugging_mvcc_watcher_total",
        "etcd_debugging_mvcc_watch_stream_total",
      ],
    });
  });

  it("a member that exposes its initial lease count: added, and its restart is safe", () => {
    const f = memberFigures(
      `${ETCD_34}# TYPE etcd_debugging_lease_initial_lease_count counter\netcd_debugging_lease_initial_lease_count 5\n`,
    );
    expect(f.leases).toBe(35);
    expect(f.countsRecovered).toBe(true);
  });

  it("older names for watchers; nothing invented when a figure is missing", () => {
    const f = memberFigures("etcd_storage_watcher_total 2\netcd_storage_watch_stream_total 1\n");
    expect(f.watchers).toBe(2);
    expect(f.watchStreams).toBe(1);
    expect(f.leases).toBeNull();
  });
});
