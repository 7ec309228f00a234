import type { Logger } from 'pino';
import { MemoryResultBus, RedisResultBus, type ResultBus } from './async/bus.ts';
import { type ChannelStore, MemoryChannelStore } from './async/channels.ts';
import type { AsyncConfig } from './async/config.ts';
import { LazyJobRunner } from './async/lazy-runner.ts';
import { MemoryJobRunner } from './async/memory-runner.ts';
import { RedisChannelStore } from './async/redis-channels.ts';
import type { JobRunner } from './async/runner.ts';
import { MemoryTokenStore, RedisTokenStore, type TokenStore } from './async/tokens.ts';
import { MemoryCacheStore } from './cache/memory-store.ts';
import { RedisCacheStore } from './cache/redis-store.ts';
import type { CacheStore } from './cache/types.ts';
import {
  type ConsoleSessionStore,
  MemoryConsoleSessionStore,
  RedisConsoleSessionStore,
} from './console-web/store.ts';
import {
  type ConversationStore,
  MemoryConversationStore,
  RedisConversationStore,
} from './conversations/index.ts';
import { type McpSessionStore, MemoryMcpSessionStore, RedisMcpSessionStore } from './mcp/sessions.ts';
import { MemorySessionStore } from './sessions/memory-store.ts';
import { RedisSessionStore } from './sessions/redis-store.ts';
import type { SessionStore } from './sessions/types.ts';
import { MemoryGuardStore } from './spend/memory-store.ts';
import { RedisGuardStore } from './spend/redis-store.ts';
import type { GuardStore } from './spend/store.ts';
import type { StateClient } from './state/connect.ts';
import {
  MemoryStoredResponseStore,
  RedisStoredResponseStore,
  type StoredResponseStore,
} from './stored-responses/index.ts';
import { MemoryWebhookStore, RedisWebhookStore, type WebhookStore } from './webhooks/store.ts';

/** Every store a gateway's features keep their state in. */
export interface Stores {
  guard: GuardStore;
  cache: CacheStore;
  sessions: SessionStore;
  channels: ChannelStore;
  tokens: TokenStore;
  webhooks: WebhookStore;
  bus: ResultBus;
  runner: JobRunner;
  /** The Responses API's stored responses (previous_response_id). */
  responses: StoredResponseStore;
  /** The Conversations API's conversations and their items. */
  conversations: ConversationStore;
  /** The web console's sessions, one-time links and sign-in attempts. */
  consoleSessions: ConsoleSessionStore;
  /** MCP sessions of the legacy era and the catalogue changes told to every pod. */
  mcpSessions: McpSessionStore;
}

/**
 * The one place Redis or memory is chosen: with the runtime-state client every store is its Redis
 * adapter on that shared, auto-pipelined client (so a request's writes of one tick travel in one
 * round trip), except the writes an answer waits on (stored responses, conversation turns), which
 * take `answerRedis` so they never queue behind settlements in flight; without a client, in-process
 * memory (embedded mode, unit tests).
 */
export function createStores(
  redis: StateClient | undefined,
  opts: { now: () => number; logger: Logger; async: AsyncConfig; answerRedis?: StateClient | undefined },
): Stores {
  const answerRedis = opts.answerRedis ?? redis;
  const { now, logger } = opts;
  if (!redis)
    return {
      guard: new MemoryGuardStore(now),
      cache: new MemoryCacheStore(now),
      sessions: new MemorySessionStore(now),
      channels: new MemoryChannelStore(now),
      tokens: new MemoryTokenStore(now),
      webhooks: new MemoryWebhookStore(),
      bus: new MemoryResultBus(),
      runner: new MemoryJobRunner({ now, logger, concurrency: opts.async.concurrency }),
      responses: new MemoryStoredResponseStore(now),
      conversations: new MemoryConversationStore(now),
      consoleSessions: new MemoryConsoleSessionStore(now),
      mcpSessions: new MemoryMcpSessionStore(now),
    };
  return {
    guard: new RedisGuardStore(redis),
    cache: new RedisCacheStore(redis),
    sessions: new RedisSessionStore(redis, now),
    channels: new RedisChannelStore(redis),
    tokens: new RedisTokenStore(redis),
    webhooks: new RedisWebhookStore(redis),
    bus: new RedisResultBus(redis, logger),
    // BullMQ is loaded when this pod first has a job to queue or to run (async/lazy-runner.ts).
    runner: new LazyJobRunner({
      redis,
      logger,
      probeMs: Math.max(1000, Math.floor(opts.async.lockMs / 2)),
      create: async () => {
        const { BullJobRunner } = await import('./async/bullmq-runner.ts');
        return new BullJobRunner(redis, {
          logger,
          now,
          concurrency: opts.async.concurrency,
          lockMs: opts.async.lockMs,
        });
      },
    }),
    responses: new RedisStoredResponseStore(answerRedis ?? redis),
    conversations: new RedisConversationStore(answerRedis ?? redis),
    consoleSessions: new RedisConsoleSessionStore(redis),
    mcpSessions: new RedisMcpSessionStore(redis, logger),
  };
}
