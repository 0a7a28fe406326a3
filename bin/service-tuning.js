// The memory settings of the long-running processes (the pusher, `edgectl heartbeat`), applied
// by their bins to every start (systemd or not).
//
// What they buy (bench/README.md "Memory"): glibc keeps the memory V8's compiler threads and
// gRPC's message buffers free in per-thread arenas, and hands little of it back; bounded, the
// pusher's RSS is 15–20 MiB lower at the same CPU. `--expose-gc` lets the idle heap trim
// (adapters/idle-heap-trim.ts) hand V8's free heap pages back once the process goes quiet. glibc
// reads its settings only when a process starts, so the bin re-executes itself once with them set
// (process.execve keeps the PID and stdio; a service manager sees one process).

/** glibc malloc: two arenas, and blocks of 64 KiB or more in their own mappings, returned on free. */
export const SERVICE_MALLOC_ENV = Object.freeze({
  MALLOC_ARENA_MAX: "2",
  MALLOC_MMAP_THRESHOLD_: "65536",
});

/**
 * V8 flags for the re-executed process. `--expose-gc`: the idle heap trim runs one
 * memory-reducing GC once the process goes quiet after work, which hands back the free heap
 * pages V8's memory reducer keeps here (the pusher: ~15 MiB after a burst; a heartbeat: its heap
 * grows by pages while its live heap stays flat). Not `--optimize-for-size` (every full GC
 * memory-reducing): about 5 MiB less under load but about 6 points of a core more for the pusher
 * at 100 changes/s (bench/README.md "Memory").
 */
export const SERVICE_V8_FLAGS = Object.freeze(["--expose-gc"]);

/** The pusher's marker: set in its re-executed process; set it yourself to run with none of the above. */
export const PUSHER_TUNED = "EDGE_PUSHER_TUNED";
/** The heartbeat's marker, the same for `edgectl heartbeat`. */
export const HEARTBEAT_TUNED = "EDGE_HEARTBEAT_TUNED";

/**
 * Whether this process already runs with the settings: both malloc variables set (whatever their
 * values) and V8's gc exposed (`--expose-gc` in `NODE_OPTIONS`), as the systemd units give them.
 */
function serviceTuned() {
  return (
    Object.keys(SERVICE_MALLOC_ENV).every((name) => process.env[name] !== undefined) &&
    typeof globalThis.gc === "function"
  );
}

/**
 * Re-executes this process with the settings above unless it has them already (the units set
 * them, which saves each start a second Node start, ~90 ms) or the operator set `marker`.
 * Variables the environment already sets win. Returns only when it does not re-execute: already
 * tuned, or a Node without `process.execve` (before 22.15).
 */
export function tuneServiceProcess(marker) {
  if (process.env[marker] !== undefined || typeof process.execve !== "function") return;
  if (serviceTuned()) return;
  const script = process.argv[1];
  if (!script) return;
  const env = { ...SERVICE_MALLOC_ENV, ...process.env, [marker]: "1" };
  const args = [process.execPath, ...SERVICE_V8_FLAGS, ...process.execArgv, script];
  process.execve(process.execPath, [...args, ...process.argv.slice(2)], env);
}

/** edgectl's options that take a value (edgectl/cli/command-context.ts `withCommonOptions`). */
export const EDGECTL_VALUE_OPTIONS = Object.freeze(["-o", "--output", "--endpoints", "--prefix"]);

/** The command edgectl's arguments run: the first that is neither an option nor an option's value. */
export function edgectlCommand(args) {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") return args[i + 1];
    if (!arg.startsWith("-")) return arg;
    if (EDGECTL_VALUE_OPTIONS.includes(arg)) i++;
  }
  return undefined;
}
