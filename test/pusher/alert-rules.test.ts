import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const DIR = resolve(import.meta.dirname, "../../deploy/prometheus");
const RULES = resolve(DIR, "alerts.yml");
const TESTS = resolve(DIR, "alerts.test.yml");
const OPERATING = resolve(import.meta.dirname, "../../docs/operating.md");
const ETCD_MAINTENANCE = resolve(import.meta.dirname, "../../docs/etcd-maintenance.md");
const run = promisify(execFile);

interface Rule {
  readonly alert: string;
  readonly annotations?: Record<string, string>;
}
interface RuleTest {
  readonly alert_rule_test?: readonly {
    readonly alertname: string;
    readonly exp_alerts?: readonly unknown[];
  }[];
}

const rules = (parse(readFileSync(RULES, "utf8")) as { groups: { rules: Rule[] }[] }).groups
  .flatMap((g) => g.rules)
  .filter((r) => r.alert);

/** Runs Debian's promtool (package `prometheus`); its output explains any failure. */
async function promtool(...args: string[]): Promise<{ code: number; output: string }> {
  try {
    const r = await run("promtool", args, { cwd: DIR });
    return { code: 0, output: r.stdout + r.stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? -1, output: `${err.stdout ?? ""}${err.stderr ?? ""}` };
  }
}

describe("deploy/prometheus/alerts.yml", () => {
  it("passes promtool check rules", async () => {
    const r = await promtool("check", "rules", RULES);
    expect(r.output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(r.code).toBe(0);
  });

  it("passes its promtool unit tests (alerts.test.yml)", async () => {
    const r = await promtool("test", "rules", TESTS);
    expect(r.output).toContain("SUCCESS");
    expect(r.code).toBe(0);
  });

  it("is loaded by the example Prometheus configuration, which passes promtool check config", async () => {
    const r = await promtool("check", "config", resolve(DIR, "prometheus.example.yml"));
    expect(r.output).toContain("is valid prometheus config file syntax");
    expect(r.output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(r.code).toBe(0);
  });

  it("has a unit test of every alert firing and one of it not firing", () => {
    const cases = (parse(readFileSync(TESTS, "utf8")) as { tests: RuleTest[] }).tests.flatMap(
      (t) => t.alert_rule_test ?? [],
    );
    expect(rules.length).toBe(16);
    for (const { alert } of rules) {
      const mine = cases.filter((c) => c.alertname === alert);
      expect(
        mine.some((c) => (c.exp_alerts ?? []).length > 0),
        `${alert} firing`,
      ).toBe(true);
      expect(
        mine.some((c) => (c.exp_alerts ?? []).length === 0),
        `${alert} quiet`,
      ).toBe(true);
    }
  });

  it("gives every alert a runbook section: docs/operating.md, etcd's in docs/etcd-maintenance.md", () => {
    for (const { alert, annotations } of rules) {
      const file = alert.startsWith("Etcd") ? ETCD_MAINTENANCE : OPERATING;
      const name = file === OPERATING ? "docs/operating.md" : "docs/etcd-maintenance.md";
      expect(annotations?.runbook).toBe(`${name}#${alert.toLowerCase()}`);
      expect(readFileSync(file, "utf8")).toContain(`### ${alert}\n`);
    }
  });
});
