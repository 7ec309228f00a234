import type { Logger } from 'pino';
import type { Pipeline } from '../pipeline/run.ts';
import type { Settle } from '../pipeline/settle.ts';
import type { SnapshotStore } from '../snapshot/store.ts';
import type { Tracing } from '../tracing/types.ts';
import type { WebhookDispatcher } from '../webhooks/dispatcher.ts';
import type { ResultBus } from './bus.ts';
import type { ChannelStore } from './channels.ts';
import type { AsyncConfig } from './config.ts';
import type { JobRunner } from './runner.ts';
import type { TokenStore } from './tokens.ts';

/** What async requests are served with: accepting, running, calling back and delivering share it. */
export interface AsyncDeps {
  snapshots: SnapshotStore;
  pipeline: Pipeline;
  settle: Settle;
  logger: Logger;
  now: () => number;
  config: AsyncConfig;
  channels: ChannelStore;
  tokens: TokenStore;
  runner: JobRunner;
  bus: ResultBus;
  webhooks: WebhookDispatcher;
  tracing: Tracing;
}
