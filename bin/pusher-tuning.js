// The pusher's memory settings, applied by bin/edge-pusher.js to every start (systemd or not).
//
// What they buy (10,000 keys, 100 changes/s; bench/README.md "Memory"): glibc keeps the memory
// V8's compiler threads and gRPC's message buffers free in per-thread arenas, and hands little of
// it back; bounded, the pusher's RSS is 15–20 MiB lower at the same CPU. glibc reads these only
// when a process starts, so the launcher re-executes itself once with them set (process.execve
// keeps the PID and stdio; a service manager sees one process).

/** glibc malloc: two arenas, and blocks of 64 KiB or more in their own mappings, returned on free. */
export const PUSHER_MALLOC_ENV = Object.freeze({
  MALLOC_ARENA_MAX: "2",
  MALLOC_MMAP_THRESHOLD_: "65536",
});

/**
 * V8 flags for the re-executed process. `--expose-gc`: the pusher's idle heap trim
 * (pusher/idle-heap-trim.ts) runs one memory-reducing GC once it goes quiet after work, which
 * hands back the ~15 MiB of free heap pages a burst leaves (V8's memory reducer does not here).
 * Not `--optimize-for-size` (every full GC memory-reducing): about 5 MiB less under load but
 * about 6 points of a core more at 100 changes/s (bench/README.md "Memory").
 */
export const PUSHER_V8_FLAGS = Object.freeze(["--expose-gc"]);

/** Set in the re-executed process; set it yourself to run with none of the above. */
export const TUNED_MARKER = "EDGE_PUSHER_TUNED";

/**
 * Re-executes this process with the settings above unless that has happened (or the operator
 * set EDGE_PUSHER_TUNED). Variables the environment already sets win. Returns only when it does
 * not re-execute: already tuned, or a Node without `process.execve` (before 22.15).
 */
export function tunePusherProcess() {
  if (process.env[TUNED_MARKER] !== undefined || typeof process.execve !== "function") return;
  const script = process.argv[1];
  if (!script) return;
  const env = { ...PUSHER_MALLOC_ENV, ...process.env, [TUNED_MARKER]: "1" };
  const args = [process.execPath, ...PUSHER_V8_FLAGS, ...process.execArgv, script];
  process.execve(process.execPath, [...args, ...process.argv.slice(2)], env);
}
