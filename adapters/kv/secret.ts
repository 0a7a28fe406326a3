import { inspect } from "node:util";

const REDACTED = "[redacted]";

/**
 * A credential that never prints itself: `String()`, `JSON.stringify`, `util.inspect` and pino
 * all see `[redacted]`. Only `reveal()` returns the value, at the point of use.
 */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  /** The raw value, for the one place that sends it. */
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return REDACTED;
  }
  toJSON(): string {
    return REDACTED;
  }
  [inspect.custom](): string {
    return REDACTED;
  }
}
