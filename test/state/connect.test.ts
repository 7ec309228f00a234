import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '#gateway/config/env';
import { createRuntimeState, redisOptionsFromEnv } from '#gateway/state/index';
import { silent } from './fixtures.ts';

describe('runtime state configuration', () => {
  it('no Redis in the environment: in-process state', () => {
    expect(redisOptionsFromEnv({})).toBeUndefined();
    expect(createRuntimeState({ registry: new Registry(), logger: silent }).backend).toBe('memory');
  });

  it('REDIS_URL: one Redis', () => {
    expect(redisOptionsFromEnv({ REDIS_URL: 'redis://:pw@redis:6379/0' })).toEqual({
      url: 'redis://:pw@redis:6379/0',
    });
  });

  it('REDIS_CLUSTER_NODES: a cluster, REDIS_URL then only lends credentials', () => {
    expect(redisOptionsFromEnv({ REDIS_CLUSTER_NODES: ' r-0:6379, r-1:6379 ,[::1]:7000,' })).toEqual({
      clusterNodes: ['r-0:6379', 'r-1:6379', '[::1]:7000'],
    });
    expect(
      redisOptionsFromEnv({ REDIS_CLUSTER_NODES: 'r-0:6379', REDIS_URL: 'rediss://u:p@r-0:6379' }),
    ).toEqual({
      url: 'rediss://u:p@r-0:6379',
      clusterNodes: ['r-0:6379'],
    });
  });

  it('refuses malformed values, naming the variable', () => {
    expect(() => redisOptionsFromEnv({ REDIS_CLUSTER_NODES: 'r-0' })).toThrow(/REDIS_CLUSTER_NODES/);
    expect(() => redisOptionsFromEnv({ REDIS_URL: 'http://redis' })).toThrow(ConfigError);
  });
});
