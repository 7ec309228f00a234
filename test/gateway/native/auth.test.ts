/** Authentication and authorisation on POST /v1/ai: every failure is 401/403/404 with the native body. */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { API_KEY, NO_AI_SCOPE_KEY, OTHER_KEY, workflow } from '../../harness/manifests.ts';
import { type Env, type ErrBody, keyWith, post, startEnv, userMsg } from './helpers.ts';

const REVOKED_KEY = 'sy_live_RevokedKeyForTheSuite0123456789ab';
const EXPIRED_KEY = 'sy_live_ExpiredKeyForTheSuite0123456789ab';
const UNKNOWN_KEY = 'sy_live_NobodyHasThisKey0123456789abcdefg';
const body = { workflow: 'chat-wf', messages: userMsg() };

let env: Env;
beforeAll(async () => {
  env = await startEnv(() => [
    workflow('chat-wf', { provider: 'oai', model: 'gpt-4o-mini' }),
    ...keyWith('revoked', REVOKED_KEY, { revoked: true }),
    ...keyWith('expired', EXPIRED_KEY, { expiresAt: '2020-01-01T00:00:00Z' }),
  ]);
});
afterAll(async () => env?.close());

const expect401 = (r: { status: number; json: ErrBody }, code = 'invalid_api_key') => {
  expect(r.status).toBe(401);
  expect(r.json.error).toBe(code);
  expect(typeof r.json.message).toBe('string');
  expect(r.json.message.length).toBeGreaterThan(0);
  if (r.json.hint !== undefined) expect(typeof r.json.hint).toBe('string');
};

describe('native auth', () => {
  it('a valid key is served (baseline)', async () => {
    const r = await post(env.gw.url, body);
    expect(r.status).toBe(200);
  });

  it('missing Authorization header → 401 missing_api_key with a hint', async () => {
    const r = await post<ErrBody>(env.gw.url, body, { key: null });
    expect401(r, 'missing_api_key');
    expect(r.json.hint).toMatch(/Bearer/);
    expect(env.sim.requests()).toHaveLength(1);
  });

  it('key without the Bearer prefix → 401', async () => {
    const r = await post<ErrBody>(env.gw.url, body, { auth: API_KEY });
    expect401(r);
    const basic = await post<ErrBody>(env.gw.url, body, { auth: `Basic ${API_KEY}` });
    expect401(basic);
  });

  it('the scheme is case-insensitive (RFC 9110 §11.1): BEARER, bearer, BeArEr are served', async () => {
    for (const scheme of ['BEARER', 'bearer', 'BeArEr']) {
      const r = await post(env.gw.url, body, { auth: `${scheme} ${API_KEY}` });
      expect(r.status, scheme).toBe(200);
    }
    expect401(await post<ErrBody>(env.gw.url, body, { auth: `Bearerx ${API_KEY}` }));
  });

  it('malformed key → 401', async () => {
    const r = await post<ErrBody>(env.gw.url, body, { auth: 'Bearer not-a-switchyard-key' });
    expect401(r);
    const short = await post<ErrBody>(env.gw.url, body, { auth: 'Bearer sy_live_short' });
    expect401(short);
  });

  it('well-formed but unknown key → 401', async () => {
    const r = await post<ErrBody>(env.gw.url, body, { key: UNKNOWN_KEY });
    expect401(r);
  });

  it('revoked key (ApiKey revoked: true) → 401', async () => {
    const r = await post<ErrBody>(env.gw.url, body, { key: REVOKED_KEY });
    expect401(r);
  });

  it('expired key (expiresAt in the past) → 401', async () => {
    const r = await post<ErrBody>(env.gw.url, body, { key: EXPIRED_KEY });
    expect401(r);
  });

  it("another project's key cannot see this project's workflows → 404 workflow_not_found", async () => {
    const r = await post<ErrBody>(env.gw.url, body, { key: OTHER_KEY });
    expect(r.status).toBe(404);
    expect(r.json.error).toBe('workflow_not_found');
    expect(r.json.message).toContain('chat-wf');
  });

  it('a key without the ai scope → 403 insufficient_permission', async () => {
    const r = await post<ErrBody>(env.gw.url, body, { key: NO_AI_SCOPE_KEY });
    expect(r.status).toBe(403);
    expect(r.json.error).toBe('insufficient_permission');
    expect(r.json.message).toContain('ai');
  });

  it('the /api/v1/ai alias authenticates the same way', async () => {
    const ok = await post(env.gw.url, body, { path: '/api/v1/ai' });
    expect(ok.status).toBe(200);
    const bad = await post<ErrBody>(env.gw.url, body, { path: '/api/v1/ai', key: null });
    expect401(bad, 'missing_api_key');
  });
});

describe('a key that expires while the gateway runs', () => {
  const SOON_KEY = 'sy_live_ExpiresSoonKeyForSuite0123456789a';
  let soon: Env;
  // Far enough ahead that a slow start never expires the key early: the test moves the clock instead.
  const expiresAt = new Date(Date.now() + 10 * 60_000).toISOString();
  beforeAll(async () => {
    soon = await startEnv(() => [
      workflow('chat-wf', { provider: 'oai', model: 'gpt-4o-mini' }),
      ...keyWith('soon', SOON_KEY, { expiresAt }),
    ]);
  });
  afterAll(async () => soon?.close());

  it('works before expiresAt and gives 401 after it, without a reconfigure', async () => {
    const before = await post(soon.gw.url, body, { key: SOON_KEY });
    expect(before.status).toBe(200);
    // The gateway runs in this process and reads the wall clock per request: move that clock past
    // expiresAt rather than waiting for it (only Date is faked; sockets and timers stay real).
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse(expiresAt) + 1000, shouldAdvanceTime: true });
    try {
      const after = await post<ErrBody>(soon.gw.url, body, { key: SOON_KEY });
      expect401(after);
      // The project's other key is unaffected.
      expect((await post(soon.gw.url, body)).status).toBe(200);
    } finally {
      vi.useRealTimers();
    }
  });
});
