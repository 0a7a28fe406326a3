import type { IOptions } from "etcd3";

type CallOptionsFactory = Extract<
  NonNullable<IOptions["defaultCallOptions"]>,
  (...args: never) => unknown
>;
type CallOptions = ReturnType<CallOptionsFactory>;
/** A gRPC client interceptor, typed through etcd3's own options. */
export type Interceptor = NonNullable<CallOptions["interceptors"]>[number];

/**
 * Adds etcd's `hasleader` metadata to a call, as etcd's Go client does with `WithRequireLeader`
 * (etcd3 1.1.2 never sends it). A member that has lost its leader (cut off from its peers) then
 * refuses the call at once with "etcdserver: no leader" instead of hanging it until a deadline, and
 * cancels a stream (watch, lease keepalive) a few election timeouts after it lost its leader,
 * instead of keeping it open and silent. Either error is retryable, so etcd3 moves to another
 * member.
 */
export const requireLeader: Interceptor = (options, next) => {
  const call = next(options);
  // grpc-js is not a direct dependency: wrap the next call instead of subclassing its
  // InterceptingCall, and only touch the metadata on the way out.
  const wrapped = new Proxy(call, {
    get(target, prop) {
      if (prop === "start") {
        return (...args: Parameters<typeof target.start>) => {
          args[0].set("hasleader", "true");
          target.start(...args);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  // The type asks for grpc-js's InterceptingCall class; grpc-js itself only uses the interface.
  return wrapped as unknown as ReturnType<Interceptor>;
};
