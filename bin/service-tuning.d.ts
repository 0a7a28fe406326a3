export declare const SERVICE_MALLOC_ENV: Readonly<
  Record<"MALLOC_ARENA_MAX" | "MALLOC_MMAP_THRESHOLD_", string>
>;
export declare const SERVICE_V8_FLAGS: readonly string[];
export declare const PUSHER_TUNED: "EDGE_PUSHER_TUNED";
export declare const HEARTBEAT_TUNED: "EDGE_HEARTBEAT_TUNED";
export declare function tuneServiceProcess(marker: string): void;
export declare const EDGECTL_VALUE_OPTIONS: readonly string[];
export declare function edgectlCommand(args: readonly string[]): string | undefined;
