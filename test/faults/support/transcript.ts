/** One captured piece of output: a log chunk, a /status or /metrics body, a response. */
export interface TranscriptEntry {
  readonly source: string;
  readonly kind: "log" | "status" | "metrics" | "healthz" | "cli" | "response";
  readonly text: string;
}

/**
 * Everything the suite's processes printed and served, kept so the secrets scenario can grep it
 * all. Secrets are registered by the scenarios that create them.
 */
export class Transcript {
  readonly entries: TranscriptEntry[] = [];
  readonly secrets = new Map<string, string>();

  add(source: string, kind: TranscriptEntry["kind"], text: string): void {
    if (text.length > 0) this.entries.push({ source, kind, text });
  }

  /** Registers a value that must never appear in any captured output. */
  secret(name: string, value: string): void {
    this.secrets.set(name, value);
  }

  /** Bytes captured of one kind. */
  bytes(kind?: TranscriptEntry["kind"]): number {
    let n = 0;
    for (const e of this.entries) if (!kind || e.kind === kind) n += e.text.length;
    return n;
  }
}
