import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson } from '../async/harness.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { API_KEY, apiKey, guardrail, project, provider, secret, workflow } from '../harness/manifests.ts';
import { ADMIN_KEY, logs } from '../sessions/helpers.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';

/**
 * External checks through the webhook contract, against a real receiver on a socket: its verdicts
 * (allow, redact with spans, block), and a receiver that is down, hangs past the rule's timeout or
 * answers garbage, for a block rule (fails closed) and a monitor rule (fails open); the answer says
 * which. Then scope combined across project, workflow and key, and the dry-run endpoint.
 */

const SECRET = `whsec_${Buffer.from('guardrail-webhook-secret-0123456789').toString('base64')}`;
const KEY_B = 'sy_live_GuardrailSecondKey0123456789abcdef';
let sim: Simulator;
let gw: RunningGateway;
let receiver: Server;
let base = '';
/** A port nothing listens on: the receiver that is down. */
let dead = '';
const seen: { path: string; body: Record<string, unknown>; signed: boolean }[] = [];
const hanging: ServerResponse[] = [];

/** The receiver's verdict per path: `undefined` hangs (never answers). */
function verdictFor(path: string, text: string): [number, string] | undefined {
  if (path === '/hang') return undefined;
  if (path === '/garbage') return [200, '{"action":"maybe"}'];
  if (path === '/status') return [500, '{}'];
  if (path === '/block') return [200, JSON.stringify({ action: 'block' })];
  const at = text.indexOf('ACME-');
  if (path === '/redact' && at >= 0)
    return [
      200,
      JSON.stringify({ action: 'redact', redactions: [{ start: at, end: at + 9, label: 'ACCOUNT' }] }),
    ];
  return [200, JSON.stringify({ action: 'allow' })];
}

function answer(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): void {
  const verdict = verdictFor(req.url ?? '', String(body.text));
  if (!verdict) hanging.push(res);
  else res.writeHead(verdict[0], { 'content-type': 'application/json' }).end(verdict[1]);
}

const hook = (name: string, mode: string, path: string, extra: Record<string, unknown> = {}) =>
  guardrail(name, {
    scope: 'workflows',
    workflowRefs: [{ name }],
    rules: [
      {
        name: 'check',
        type: 'webhook',
        mode,
        url: `${path === '/down' ? dead : base}${path}`,
        timeoutMs: 150,
        ...extra,
      },
    ],
  });
const CASES = [
  ['closed-down', 'block', '/down'],
  ['closed-hang', 'block', '/hang'],
  ['closed-garbage', 'block', '/garbage'],
  ['closed-status', 'block', '/status'],
  ['open-down', 'monitor', '/down'],
  ['open-hang', 'monitor', '/hang'],
  ['open-garbage', 'monitor', '/garbage'],
] as const;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}') as Record<string, unknown>;
      seen.push({ path: req.url ?? '', body, signed: typeof req.headers['webhook-signature'] === 'string' });
      answer(req, res, body);
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const gone = createServer();
  await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
  dead = `http://127.0.0.1:${(gone.address() as AddressInfo).port}`;
  await new Promise((r) => gone.close(r));
  sim = await startSimulator();
  const wf = (name: string) => workflow(name, { provider: 'oai', model: 'gpt-4o-mini' });
  gw = await startGateway([
    project('app', { outboundFetch: { allowPrivateNetworks: true } }),
    ...apiKey('main', API_KEY),
    ...apiKey('second', KEY_B),
    ...apiKey('admin', ADMIN_KEY, { scopes: ['ai', 'console'] }),
    ...provider('oai', 'openai', sim.url, ['gpt-4o-mini']),
    secret('hook-secret', { secret: SECRET }),
    ...CASES.flatMap(([name, mode, path]) => [wf(name), hook(name, mode, path)]),
    wf('verdict-redact'),
    hook('verdict-redact', 'redact', '/redact', { secretRef: { name: 'hook-secret' }, timeoutMs: 5000 }),
    wf('out-redact'),
    hook('out-redact', 'redact', '/redact', { direction: 'output', timeoutMs: 5000 }),
    wf('out-block'),
    hook('out-block', 'block', '/block', { direction: 'output', timeoutMs: 5000 }),
    wf('verdict-block'),
    hook('verdict-block', 'block', '/block'),
    wf('scoped'),
    guardrail('base', {
      rules: [
        { name: 'cards', type: 'card', mode: 'block', enforced: true },
        { name: 'mail', type: 'email', mode: 'redact' },
      ],
    }),
    guardrail('scoped', {
      scope: 'workflows',
      workflowRefs: [{ name: 'scoped' }],
      rules: [
        { name: 'tickets', type: 'pattern', mode: 'redact', pattern: 'TICKET-[0-9]{4}', label: 'TICKET' },
      ],
      disable: ['base/cards', 'base/mail'],
    }),
    guardrail('second-key', {
      scope: 'keys',
      apiKeyRefs: [{ name: 'second' }],
      rules: [{ name: 'deny', type: 'denyList', mode: 'block', words: ['TICKET-0001'] }],
    }),
  ]);
}, 60_000);
afterAll(async () => {
  for (const res of hanging) res.destroy();
  await new Promise((r) => receiver?.close(r));
  await gw?.close();
  await sim?.close();
});

const ask = (workflowName: string, content: string, key = API_KEY) =>
  fetch(`${gw.url}/v1/ai`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ workflow: workflowName, messages: [{ role: 'user', content }] }),
  }).then(async (r) => ({
    status: r.status,
    header: r.headers.get('x-service-guardrails'),
    body: (await r.json()) as Record<string, unknown>,
  }));

describe('webhook checks', () => {
  it('a redact verdict masks the spans it names before the provider; the delivery is signed', async () => {
    const r = await ask('verdict-redact', 'Close account ACME-1234 today');
    expect(r.status).toBe(200);
    expect(r.header).toBe('verdict-redact/check=redact');
    expect(JSON.stringify(sim.requests().at(-1)?.body)).toContain('Close account [ACCOUNT] today');
    const delivery = seen.find((s) => s.path === '/redact');
    expect(delivery).toMatchObject({
      signed: true,
      body: { direction: 'input', text: 'Close account ACME-1234 today', rule: 'verdict-redact/check' },
    });
    expect(delivery?.body.metadata).toMatchObject({
      project: 'team.app',
      workflow: 'verdict-redact',
      key_id: 'team/main',
    });
  });

  it('a block verdict refuses with guardrail_blocked', async () => {
    const r = await ask('verdict-block', 'anything');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'guardrail_blocked', rule: 'verdict-block/check' });
  });

  it.each(CASES)('%s: a %s rule whose receiver answers at %s', async (name, mode) => {
    const before = sim.requests().length;
    const r = await ask(name, 'hello');
    if (mode === 'block') {
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'guardrail_blocked', rule: `${name}/check`, check_failed: true });
      expect(r.header).toBe(`${name}/check=failed-closed`);
      expect(sim.requests().length).toBe(before);
    } else {
      expect(r.status).toBe(200);
      expect(r.header).toBe(`${name}/check=failed-open`);
      expect(sim.requests().length).toBe(before + 1);
    }
  });

  it('the request log says which way each check failed', async () => {
    await gw.gateway.state.flush();
    const entries = await logs(gw.url, 'limit=100');
    const failures = entries.flatMap(
      (e) => (e.details?.guardrails as { failures?: unknown[] } | undefined)?.failures ?? [],
    );
    expect(failures).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ rule: 'closed-hang/check', outcome: 'failed-closed', why: 'timeout' }),
        expect.objectContaining({ rule: 'open-garbage/check', outcome: 'failed-open', why: 'garbage' }),
        expect.objectContaining({ rule: 'open-down/check', outcome: 'failed-open', why: 'unreachable' }),
        expect.objectContaining({ rule: 'closed-status/check', outcome: 'failed-closed', why: 'status' }),
      ]),
    );
  });
});

describe('webhook checks on streamed answers', () => {
  const stream = (workflowName: string, content: string) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: workflowName, stream: true, messages: [{ role: 'user', content }] }),
    }).then((r) => r.text());
  const frames = (body: string) =>
    body
      .split('\n\n')
      .map((b) => b.replace(/^data: /, ''))
      .filter((d) => d.startsWith('{'))
      .map(
        (d) => JSON.parse(d) as { choices?: { delta?: { content?: string } }[]; error?: { code: string } },
      );

  it('the answer is held, checked whole, and sent redacted', async () => {
    const body = await stream('out-redact', 'Close ACME-1234 now');
    const text = frames(body)
      .map((f) => f.choices?.[0]?.delta?.content ?? '')
      .join('');
    expect(text).toBe('Simulated openai/gpt-4o-mini reply: Close [ACCOUNT] now');
    expect(seen.some((s) => s.path === '/redact' && s.body.direction === 'output')).toBe(true);
  });

  it('a block verdict ends the stream with the error event and none of the text', async () => {
    const body = await stream('out-block', 'Say something');
    expect(body).not.toContain('Simulated');
    expect(frames(body).at(-1)?.error?.code).toBe('guardrail_blocked');
  });
});

describe('scope: project, workflow and key combined', () => {
  it('an enforced project rule cannot be switched off by a workflow; a plain one can', async () => {
    const card = await ask('scoped', 'pay with 4111 1111 1111 1111');
    expect(card.status).toBe(400);
    expect(card.body).toMatchObject({ rule: 'base/cards' });
    const mail = await ask('scoped', 'mail a@example.com about TICKET-0001');
    expect(mail.status).toBe(200);
    expect(mail.header).toBe('scoped/tickets=redact');
    expect(JSON.stringify(sim.requests().at(-1)?.body)).toContain('mail a@example.com about [TICKET]');
  });

  it("a key's Guardrail adds its rules for that key only; a block anywhere wins over a redact", async () => {
    const other = await ask('scoped', 'about TICKET-0001', KEY_B);
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ rule: 'second-key/deny' });
    expect((await ask('scoped', 'about TICKET-0001')).status).toBe(200);
  });
});

describe('POST /v1/guardrails/evaluate', () => {
  it('dry-runs a text against the rules this key gets on a workflow', async () => {
    const r = await postJson(`${gw.url}/v1/guardrails/evaluate`, API_KEY, {
      workflow: 'scoped',
      text: 'TICKET-1234 and b@example.com',
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      object: 'guardrail.evaluation',
      action: 'redact',
      blocked_by: null,
      redacted_text: '[TICKET] and b@example.com',
      rules: ['base/cards', 'scoped/tickets'],
      findings: [{ rule: 'scoped/tickets', label: 'TICKET', mode: 'redact', start: 0, end: 11 }],
    });
    const blocked = await postJson(`${gw.url}/v1/guardrails/evaluate`, KEY_B, {
      workflow: 'scoped',
      text: 'TICKET-0001',
    });
    expect(blocked.body).toMatchObject({ action: 'block', blocked_by: 'second-key/deny' });
    const hooks = await postJson(`${gw.url}/v1/guardrails/evaluate`, API_KEY, {
      workflow: 'verdict-block',
      text: 'x',
      direction: 'output',
    });
    expect(hooks.body).toMatchObject({ action: 'allow', not_evaluated: ['verdict-block/check'] });
    expect(
      (await postJson(`${gw.url}/v1/guardrails/evaluate`, API_KEY, { workflow: 'nope', text: 'x' })).status,
    ).toBe(404);
    expect(
      (await postJson(`${gw.url}/v1/guardrails/evaluate`, undefined, { workflow: 'scoped', text: 'x' }))
        .status,
    ).toBe(401);
  });
});
