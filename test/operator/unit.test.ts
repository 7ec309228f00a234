import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isWellFormedKey } from '#operator/compiler/apikeys';
import { WorkQueue } from '#operator/controller/queue';
import {
  GENERATED_KEY_LENGTH,
  generateApiKey,
  hasValidChecksum,
  RANDOM_BITS,
  randomBase62,
} from '#operator/keys/generate';
import { planKeySecret, ROTATION_ANNOTATION } from '#operator/keys/secret-plan';
import { microTime } from '#operator/leader/lease';
import type { ApiKey } from '#operator/resources/index';
import { readyTransition, sameStatus, setCondition, statusMergePatch } from '#operator/status/conditions';
import { desiredStatus } from '#operator/status/desired';

describe('generated API keys', () => {
  it('have the prefix, ≥192 bits of randomness and a valid checksum', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^sy_live_[0-9A-Za-z]{49}$/);
    expect(key).toHaveLength(GENERATED_KEY_LENGTH);
    expect(RANDOM_BITS).toBeGreaterThanOrEqual(192);
    expect(hasValidChecksum(key)).toBe(true);
    expect(isWellFormedKey(key)).toBe(true);
  });

  it('detects any single-character change', () => {
    const key = generateApiKey();
    for (let i = 8; i < key.length; i++) {
      const c = key[i] === 'a' ? 'b' : 'a';
      expect(hasValidChecksum(key.slice(0, i) + c + key.slice(i + 1))).toBe(false);
    }
    expect(hasValidChecksum(key.slice(0, -1))).toBe(false);
    expect(hasValidChecksum(`sy_test_${key.slice(8)}`)).toBe(false);
  });

  it('are unique and uniformly drawn from base62', () => {
    const keys = new Set(Array.from({ length: 2000 }, () => generateApiKey()));
    expect(keys.size).toBe(2000);
    const counts = new Map<string, number>();
    for (const c of randomBase62(62_000)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const n of counts.values()) expect(n).toBeGreaterThan(700); // expected 1000 each
  });
});

describe('conditions', () => {
  const t0 = new Date('2030-01-01T00:00:00Z');
  const t1 = new Date('2030-01-01T00:05:00Z');

  it('keeps lastTransitionTime while the status does not change', () => {
    const a = setCondition(
      undefined,
      { type: 'Ready', status: 'False', reason: 'ProviderNotFound', message: 'x' },
      t0,
    );
    const b = setCondition(a, { type: 'Ready', status: 'False', reason: 'ModelNotFound', message: 'y' }, t1);
    expect(b[0]?.lastTransitionTime).toBe('2030-01-01T00:00:00Z');
    expect(b[0]?.reason).toBe('ModelNotFound');
    const c = setCondition(b, { type: 'Ready', status: 'True', reason: 'Valid', message: 'ok' }, t1);
    expect(c[0]?.lastTransitionTime).toBe('2030-01-01T00:05:00Z');
  });

  it('keeps other condition types in place', () => {
    const list = [
      { type: 'Other', status: 'True' as const, reason: 'X', message: '', lastTransitionTime: 'a' },
    ];
    const out = setCondition(list, { type: 'Ready', status: 'True', reason: 'Valid', message: '' }, t0);
    expect(out.map((c) => c.type)).toEqual(['Other', 'Ready']);
  });

  it('reports transitions (status or reason), not repeats', () => {
    const ready = {
      type: 'Ready',
      status: 'True' as const,
      reason: 'Valid',
      message: '',
      lastTransitionTime: 'a',
    };
    const bad = { ...ready, status: 'False' as const, reason: 'ProviderNotFound' };
    expect(readyTransition(undefined, ready)).toEqual({ type: 'Normal', reason: 'Valid' });
    expect(readyTransition(ready, ready)).toBeUndefined();
    expect(readyTransition(ready, bad)).toEqual({ type: 'Warning', reason: 'ProviderNotFound' });
    expect(readyTransition(bad, { ...bad, reason: 'ModelNotFound' })?.reason).toBe('ModelNotFound');
  });
});

describe('status diffing', () => {
  const now = new Date('2030-01-01T00:00:00Z');
  const verdict = { ok: true as const, reason: 'Valid' as const, message: 'ok', details: { models: 3 } };

  it('an unchanged object produces the same status (no write, no loop)', () => {
    const first = desiredStatus({
      kind: 'Provider',
      generation: 2,
      current: undefined,
      verdict,
      extra: {},
      now,
    });
    expect(first).toMatchObject({ models: 3, observedGeneration: 2 });
    const later = desiredStatus({
      kind: 'Provider',
      generation: 2,
      current: first,
      verdict,
      extra: {},
      now: new Date('2030-02-01T00:00:00Z'),
    });
    expect(sameStatus(first, later)).toBe(true);
  });

  it('a new generation or a field change is a difference', () => {
    const first = desiredStatus({
      kind: 'Provider',
      generation: 2,
      current: undefined,
      verdict,
      extra: {},
      now,
    });
    const next = desiredStatus({ kind: 'Provider', generation: 3, current: first, verdict, extra: {}, now });
    expect(sameStatus(first, next)).toBe(false);
    expect(sameStatus({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameStatus({ a: 1, b: { c: 1, d: 2 } }, { b: { d: 2, c: 1 }, a: 1 })).toBe(true);
  });

  it('merge patches null out fields that went away', () => {
    expect(statusMergePatch({ keyPrefix: 'sy_live_abcd', x: 1 }, { x: 2 })).toEqual({
      status: { keyPrefix: null, x: 2 },
    });
  });
});

describe('generated key Secret plan', () => {
  const key = (spec: Partial<ApiKey['spec']> = {}): ApiKey => ({
    apiVersion: 'switchyard.dev/v1alpha1',
    kind: 'ApiKey',
    metadata: { name: 'k', namespace: 'ns', uid: 'u1' },
    spec: { projectRef: { name: 'p' }, scopes: ['ai'], revoked: false, ...spec },
  });
  const now = new Date('2030-01-01T00:00:00Z');
  let n = 0;
  const gen = () => `sy_live_generated_${n++}_xxxxxxxxxxxxxxxxxxxxxx`;
  const dec = (s: unknown) => Buffer.from(String(s), 'base64').toString();

  it('creates an owned Secret, rotates with a grace period, then drops the old key', () => {
    const create = planKeySecret(key(), undefined, now, gen);
    expect(create.action).toBe('create');
    if (create.action !== 'create') return;
    const secret = create.secret;
    expect(secret.metadata.name).toBe('k-apikey');
    expect(secret.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'ApiKey',
      uid: 'u1',
      controller: true,
    });
    const first = dec((secret.data as Record<string, string>).apiKey);
    expect(planKeySecret(key(), secret, now, gen).action).toBe('none');

    const rotated = planKeySecret(
      key({ rotation: { generation: 1, gracePeriodSeconds: 60 } }),
      secret,
      now,
      gen,
    );
    expect(rotated.action).toBe('update');
    if (rotated.action !== 'update') return;
    const data = rotated.secret.data as Record<string, string>;
    expect(dec(data.previousApiKey)).toBe(first);
    expect(dec(data.apiKey)).not.toBe(first);
    expect(dec(data.previousValidUntil)).toBe('2030-01-01T00:01:00.000Z');
    expect(rotated.secret.metadata.annotations?.[ROTATION_ANNOTATION]).toBe('1');
    expect(rotated.event).not.toContain(first);

    const spec = key({ rotation: { generation: 1, gracePeriodSeconds: 60 } });
    expect(planKeySecret(spec, rotated.secret, new Date('2030-01-01T00:00:30Z'), gen).action).toBe('none');
    const cleanup = planKeySecret(spec, rotated.secret, new Date('2030-01-01T00:01:01Z'), gen);
    expect(cleanup.action).toBe('update');
    if (cleanup.action === 'update') expect(cleanup.secret.data).not.toHaveProperty('previousApiKey');
  });

  it('leaves secretRef keys, revoked keys and foreign Secrets alone', () => {
    expect(planKeySecret(key({ secretRef: { name: 's', key: 'apiKey' } }), undefined, now).action).toBe(
      'none',
    );
    expect(planKeySecret(key({ revoked: true }), undefined, now).action).toBe('none');
    const foreign = { metadata: { name: 'k-apikey', namespace: 'ns' }, data: { apiKey: 'eA==' } };
    expect(planKeySecret(key(), foreign, now).action).toBe('none');
  });
});

describe('work queue', () => {
  // The queue schedules with setTimeout and Date.now: a fake clock runs its delays and backoff instantly.
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('de-duplicates keys and runs a key again if re-added while running', async () => {
    const q = new WorkQueue();
    const runs: string[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    q.start(async (k) => {
      runs.push(k);
      if (runs.length === 1) await gate;
    });
    q.add('a');
    q.add('a');
    q.add('a');
    await vi.advanceTimersByTimeAsync(20);
    q.add('a', 10);
    q.add('a', 10);
    release();
    await vi.advanceTimersByTimeAsync(60);
    expect(runs).toEqual(['a', 'a']);
    await q.stop();
  });

  it('retries a failing key with backoff', async () => {
    const q = new WorkQueue();
    let calls = 0;
    q.start(async () => {
      calls++;
      if (calls < 3) throw new Error('boom');
    });
    q.add('x');
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls).toBe(3);
    await q.stop();
  });
});

describe('lease time format', () => {
  it('writes MicroTime with six fractional digits', () => {
    expect(microTime(new Date('2030-01-01T00:00:00.123Z'))).toBe('2030-01-01T00:00:00.123000Z');
  });
});
