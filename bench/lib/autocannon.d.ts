// The part of autocannon 8's API the bench uses (the package ships no types).
declare module "autocannon" {
  /** One request of a connection's cycle; `setupRequest` rebuilds it before every send. */
  interface AutocannonRequest {
    setupRequest?: (
      req: AutocannonRequestData,
      context: Record<string, unknown>,
    ) => AutocannonRequestData;
    /** Called with the same per-connection context as the `setupRequest` of that request. */
    onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
  }
  interface AutocannonRequestData {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
  }
  interface AutocannonOptions {
    url: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    /** Stop after this many requests (instead of `duration`). */
    amount?: number;
    headers?: Record<string, string>;
    method?: string;
    requests?: AutocannonRequest[];
  }
  interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p90: number;
    p99: number;
    max: number;
    total: number;
  }
  interface AutocannonResult {
    requests: Histogram;
    latency: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    duration: number;
  }
  /** The running load: awaitable for its result, `stop()` ends it early. */
  interface AutocannonRun extends PromiseLike<AutocannonResult> {
    stop(): void;
  }
  function autocannon(opts: AutocannonOptions): AutocannonRun;
  export default autocannon;
}
