import {
  defineScript,
  PUBLISH_SCRIPT,
  REDIS_KEYS,
  type RedisClient,
  replies,
  type Script,
  SNAPSHOT_HISTORY,
  type Snapshot,
} from '#contract';

export interface PublishResult {
  published: boolean;
  version: string;
  bytes: number;
}

/**
 * Writes a compiled snapshot to Redis atomically and announces it; a version already current is
 * skipped. Works on one Redis and on Redis Cluster: every key the script touches carries the
 * `{switchyard-config}` hash tag (one slot, one node), and PUBLISH reaches every node of a cluster.
 */
export class SnapshotPublisher {
  readonly #publish: Script<number>;

  constructor(redis: RedisClient) {
    this.#publish = defineScript(redis, 'switchyardSnapshotPublish', PUBLISH_SCRIPT, replies.integer);
  }

  async publish(snapshot: Snapshot): Promise<PublishResult> {
    const json = JSON.stringify(snapshot);
    const prefix = REDIS_KEYS.snapshot('');
    const result = await this.#publish(
      [REDIS_KEYS.current, REDIS_KEYS.snapshot(snapshot.version), REDIS_KEYS.history],
      [snapshot.version, json, String(Date.now()), String(SNAPSHOT_HISTORY), REDIS_KEYS.changed, prefix],
    );
    return { published: result === 1, version: snapshot.version, bytes: Buffer.byteLength(json) };
  }
}
