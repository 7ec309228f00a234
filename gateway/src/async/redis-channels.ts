import { defineScript, replies, type Script } from '#contract';
import type { StateClient } from '../state/connect.ts';
import type { ChannelRecord, ChannelState, ChannelStore, TransitionResult } from './channels.ts';
import { ASYNC_KEYS } from './keys.ts';

/** Moves a channel to ARGV[1] (doc ARGV[2]) only from one of ARGV[3..]; returns {won, previous state}. */
const TRANSITION = `
local s = redis.call('HGET', KEYS[1], 'state')
if not s then return {0, ''} end
for i = 3, #ARGV do
  if ARGV[i] == s then
    redis.call('HSET', KEYS[1], 'state', ARGV[1], 'doc', ARGV[2])
    return {1, s}
  end
end
return {0, s}
`;

export class RedisChannelStore implements ChannelStore {
  readonly #redis: StateClient;
  readonly #transition: Script<[number, string]>;

  constructor(redis: StateClient) {
    this.#redis = redis;
    this.#transition = defineScript(redis, 'switchyardChannelTransition', TRANSITION, replies.flagged);
  }

  async create(rec: ChannelRecord, ttlSec: number): Promise<void> {
    const key = ASYNC_KEYS.channel(rec.doc.project_id, rec.doc.channel_id);
    await this.#redis
      .multi()
      .hset(key, 'state', rec.state, 'doc', JSON.stringify(rec.doc))
      .expire(key, ttlSec)
      .exec();
  }

  async get(projectId: string, channelId: string): Promise<ChannelRecord | undefined> {
    const [state, doc] = await this.#redis.hmget(ASYNC_KEYS.channel(projectId, channelId), 'state', 'doc');
    if (!state || !doc) return undefined;
    return { state: state as ChannelState, doc: JSON.parse(doc) };
  }

  async transition(
    projectId: string,
    channelId: string,
    from: readonly ChannelState[],
    to: ChannelRecord,
  ): Promise<TransitionResult> {
    const [won, prev] = await this.#transition(
      [ASYNC_KEYS.channel(projectId, channelId)],
      [to.state, JSON.stringify(to.doc), ...from],
    );
    return won === 1 ? { ok: true } : { ok: false, current: (prev || undefined) as ChannelState | undefined };
  }
}
