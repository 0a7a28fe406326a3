/** `PUSHER_LISTEN`'s default: where the pusher serves `/status`, and where `edgectl status` asks. */
export const DEFAULT_PUSHER_LISTEN = "127.0.0.1:9464";

/** `HEARTBEAT_SECONDS`'s default: the pusher rewrites KV `meta` at least this often. */
export const DEFAULT_HEARTBEAT_SECONDS = 60;
