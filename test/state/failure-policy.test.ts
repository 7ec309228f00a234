import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '#gateway/config/env';
import { createOutageMetrics, decideOnOutage, outagePolicyFromEnv } from '#gateway/state/failure-policy';
import { capturingLogger } from './fixtures.ts';

async function count(registry: Registry, feature: string, decision: string): Promise<number> {
  const m = registry.getSingleMetric('switchyard_state_unavailable_total');
  const values = m ? (await m.get()).values : [];
  return values.find((v) => v.labels.feature === feature && v.labels.decision === decision)?.value ?? 0;
}

describe('failure policy when Redis is unreachable', () => {
  it('defaults: rate limits fail open, spend caps fail closed', () => {
    expect(outagePolicyFromEnv({})).toEqual({ rate_limits: 'open', spend_caps: 'closed' });
  });

  it('each feature is switchable from the environment', () => {
    expect(
      outagePolicyFromEnv({
        SWITCHYARD_RATE_LIMITS_ON_REDIS_DOWN: 'closed',
        SWITCHYARD_SPEND_CAPS_ON_REDIS_DOWN: 'open',
      }),
    ).toEqual({ rate_limits: 'closed', spend_caps: 'open' });
  });

  it('refuses anything but open or closed, naming the variable', () => {
    expect(() => outagePolicyFromEnv({ SWITCHYARD_SPEND_CAPS_ON_REDIS_DOWN: 'maybe' })).toThrow(ConfigError);
    expect(() => outagePolicyFromEnv({ SWITCHYARD_SPEND_CAPS_ON_REDIS_DOWN: 'maybe' })).toThrow(
      /SWITCHYARD_SPEND_CAPS_ON_REDIS_DOWN/,
    );
  });

  it('counts every decision and logs the first, then once per interval with the count since', async () => {
    const registry = new Registry();
    let now = 1_000_000;
    const metrics = createOutageMetrics(registry, { logEveryMs: 10_000, now: () => now });
    const { logger, lines } = capturingLogger();
    const policy = outagePolicyFromEnv({});
    expect(decideOnOutage('rate_limits', policy, metrics, logger, new Error('ECONNREFUSED'))).toBe('open');
    for (let i = 0; i < 4; i++) expect(decideOnOutage('spend_caps', policy, metrics, logger)).toBe('closed');
    now += 9_999;
    expect(decideOnOutage('spend_caps', policy, metrics, logger)).toBe('closed');
    now += 1;
    expect(decideOnOutage('spend_caps', policy, metrics, logger)).toBe('closed');

    expect(await count(registry, 'rate_limits', 'open')).toBe(1);
    expect(await count(registry, 'spend_caps', 'closed')).toBe(6);
    expect(await count(registry, 'spend_caps', 'open')).toBe(0);
    expect(lines.map((l) => [l.feature, l.decision, l.decisions])).toEqual([
      ['rate_limits', 'open', 1],
      ['spend_caps', 'closed', 1],
      ['spend_caps', 'closed', 5],
    ]);
    expect(lines[0]?.err).toContain('ECONNREFUSED');
  });
});
