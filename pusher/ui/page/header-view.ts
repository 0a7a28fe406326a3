import type { StatusDocument } from "../../status.js";
import type { UiMap } from "../ui-document.js";
import { byId, h } from "./dom.js";

/**
 * The header: map revision, pushed revision, epoch, role, lag and the problem count, with the
 * problems (and the pusher's last error) listed on demand.
 */
export class HeaderView {
  private readonly toggle = byId<HTMLButtonElement>("problems-toggle");
  private readonly panel = byId("problems");

  constructor() {
    this.toggle.addEventListener("click", () => this.setOpen(this.panel.hidden));
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && !this.panel.hidden) {
        this.setOpen(false);
        this.toggle.focus();
      }
    });
  }

  private setOpen(open: boolean): void {
    this.panel.hidden = !open;
    this.toggle.setAttribute("aria-expanded", String(open));
  }

  render(status: StatusDocument | null, map: UiMap | null): void {
    const set = (id: string, text: string, state = "") => {
      const el = byId(id);
      el.textContent = text;
      el.dataset.state = state;
    };
    set("stat-rev", map ? String(map.rev) : "–");
    const behind = (status?.lag_revisions ?? 0) > 0;
    set(
      "stat-pushed",
      status?.pushed_revision != null ? String(status.pushed_revision) : "–",
      behind ? "warn" : "",
    );
    set("stat-epoch", String(status?.epoch ?? map?.epoch ?? "–"));
    if (status) {
      const lag = `${status.lag_revisions ?? "–"} rev · ${status.lag_seconds.toFixed(1)} s`;
      set("stat-lag", lag, behind || status.lag_seconds > 0 ? "warn" : "ok");
    }
    const role = byId("role");
    role.textContent = status ? status.role : "–";
    role.dataset.role = status?.role ?? "";
    const chips: string[] = [];
    if (status && !status.etcd_reachable) chips.push("etcd unreachable");
    if (status && !status.kv_ok) chips.push("KV failing");
    if (status?.role === "leader" && !status.lease_ok) chips.push("lease not renewed");
    byId("pusher-id").replaceChildren(
      h("span", { className: "mono", text: status?.pusher ?? "" }),
      ...chips.map((c) => h("span", { className: "chip chip-bad", text: c })),
    );

    const problems = status?.problems ?? map?.problems ?? [];
    this.toggle.textContent = String(problems.length);
    this.toggle.dataset.state = problems.length ? "warn" : "ok";
    this.toggle.setAttribute(
      "aria-label",
      `${problems.length} problem${problems.length === 1 ? "" : "s"}: show the list`,
    );
    byId("problems-list").replaceChildren(
      ...(problems.length
        ? problems.map((p) => h("li", { className: "mono", text: p }))
        : [h("li", { className: "muted", text: "No problems reported." })]),
    );
    const last = byId("last-error");
    last.hidden = !status?.last_error;
    last.textContent = status?.last_error
      ? `Last error (${status.last_error.at}): ${status.last_error.message}`
      : "";
  }
}
