/** Why one poll of the edge's observations failed (docs/reference.md §12, `/status` `reason`). */
export type ObserveFailureCode =
  /** No answer: refused, reset, DNS, TLS or the poll's timeout. */
  | "edge-unreachable"
  /** 401 or 403: `OBSERVE_TOKEN` is not the edge's. */
  | "unauthorized"
  /** Any other status than 200 (a 404: the edge has no `OBSERVE_TOKEN`, or is not this edge). */
  | "edge-status"
  /** An answer that is not the documented JSON (or is larger than the poll reads). */
  | "junk-response";

/** Every {@link ObserveFailureCode}, in the order `/metrics` lists them. */
export const OBSERVE_FAILURE_CODES: readonly ObserveFailureCode[] = [
  "edge-unreachable",
  "unauthorized",
  "edge-status",
  "junk-response",
];

/** A failed poll; the message never carries the token nor the answer's text. */
export class ObserveFailure extends Error {
  constructor(
    readonly code: ObserveFailureCode,
    message: string,
  ) {
    super(message);
    this.name = "ObserveFailure";
  }
}
