/**
 * The gateway's public surface for other packages (embedded mode, the bench): build a gateway
 * around a snapshot store, and feed the store from Redis. Everything else under gateway/src is
 * internal to the gateway.
 */
export { readGatewayEnv } from './config/env.ts';
export { createGateway, type Gateway } from './gateway.ts';
export { RedisSnapshotSource } from './snapshot/redis-source.ts';
export { SnapshotStore } from './snapshot/store.ts';
export { createRuntimeState } from './state/index.ts';
