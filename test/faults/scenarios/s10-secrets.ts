import { Invariants, type Scenario } from "../scenario.js";

/** Forms a leaked secret could take in text: as is, URL-encoded, base64, JSON-escaped. */
function encodings(secret: string): string[] {
  return [
    ...new Set([
      secret,
      encodeURIComponent(secret),
      Buffer.from(secret).toString("base64"),
      JSON.stringify(secret).slice(1, -1),
    ]),
  ];
}

export const secretsGrep: Scenario = {
  id: 10,
  title: "Secrets",
  invariant:
    "across every log line and every /status and /metrics body the suite produced, the Cloudflare token and the debug token (and etcd passwords) never appear",
  budgetMs: () => 60_000,
  async run(ctx) {
    const inv = new Invariants();
    const t = ctx.transcript;
    const secrets = [...t.secrets];
    const hits = new Map<string, number>();
    for (const e of t.entries) {
      for (const [name, value] of secrets) {
        for (const form of encodings(value)) {
          if (!e.text.includes(form)) continue;
          hits.set(name, (hits.get(name) ?? 0) + 1);
          const at = e.text.indexOf(form);
          inv.check(
            false,
            `${name.split("(")[0]?.trim()} leaked`,
            () =>
              `${e.kind} of ${e.source}: …${e.text.slice(Math.max(0, at - 40), at).replace(/\s+/g, " ")}[SECRET]…`,
          );
        }
      }
    }
    // The grep must be able to see a leak: a planted one is found, and there was output to read.
    const canary = secrets[0];
    const planted = canary
      ? encodings(canary[1]).some((f) => `log line with ${canary[1]} inside`.includes(f))
      : false;
    inv.check(
      secrets.length > 0 && planted,
      "the grep is blind (no secrets registered or a planted one not found)",
      () => `${secrets.length} secrets`,
    );
    const kinds = ["log", "status", "metrics", "cli", "response"] as const;
    const sizes = kinds.map((k) => `${k} ${(t.bytes(k) / 1024).toFixed(0)} KiB`).join(", ");
    const want = ctx.quick ? [] : (["log", "status", "metrics"] as const);
    for (const k of want) inv.check(t.bytes(k) > 0, "nothing captured to grep", () => k);
    const names = [...new Set(secrets.map(([n]) => n.split("(")[0]?.trim()))];
    return {
      runs: t.entries.length,
      figure: `${secrets.length} secrets (${names.join(", ")}) × ${t.entries.length} captured outputs (${(t.bytes() / 1024 / 1024).toFixed(1)} MiB): ${[...hits.values()].reduce((a, b) => a + b, 0)} leaks`,
      failures: inv.failures(),
      notes: [`grepped ${sizes}`],
    };
  },
};
