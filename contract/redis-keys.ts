/**
 * Where the snapshot lives in Redis. All config keys share the `{switchyard-config}` hash tag, so the
 * publish script touches one slot and the same code runs on Redis Cluster.
 */
const TAG = '{switchyard-config}';

export const REDIS_KEYS = {
  /** String: version of the snapshot gateways should serve. */
  current: `switchyard:${TAG}:current`,
  /** String: the snapshot JSON of one version. */
  snapshot: (version: string): string => `switchyard:${TAG}:snapshot:${version}`,
  /** Sorted set of published versions by publish time, so old ones can be trimmed. */
  history: `switchyard:${TAG}:history`,
  /** Pub/sub channel; the message is the new version. Gateways also poll `current`, since pub/sub can drop messages. */
  changed: 'switchyard:config:changed',
} as const;

/** How many published versions stay readable (a gateway mid-fetch must still find the one it was told about). */
export const SNAPSHOT_HISTORY = 5;

/**
 * Atomic publish: store the version, move the pointer, trim history, then announce. Returns 0 when
 * the version is already current (nothing written), 1 when published.
 * KEYS[1]=current KEYS[2]=snapshot:<v> KEYS[3]=history; ARGV: version, json, now-ms, keep, channel, key prefix.
 * Cluster-safe: the old snapshot keys it deletes are built from ARGV (their versions are only known
 * inside the script), but they carry the same hash tag, so they sit in the declared keys' slot,
 * which Redis Cluster allows; PUBLISH reaches subscribers on every node (test/operator/redis-cluster.test.ts).
 */
export const PUBLISH_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] and redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
local n = redis.call('ZCARD', KEYS[3])
local keep = tonumber(ARGV[4])
if n > keep then
  local old = redis.call('ZRANGE', KEYS[3], 0, n - keep - 1)
  for _, v in ipairs(old) do
    if v ~= ARGV[1] then redis.call('DEL', ARGV[6] .. v) end
    redis.call('ZREM', KEYS[3], v)
  end
end
redis.call('PUBLISH', ARGV[5], ARGV[1])
return 1
`;
