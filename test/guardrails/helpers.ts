import { Redis } from 'ioredis';
import { expect } from 'vitest';
import { API_KEY, apiKey, guardrail, project, provider, workflow } from '../harness/manifests.ts';
import { ADMIN_KEY, adminKeys, type LogEntry, logs, workflowIn } from '../sessions/helpers.ts';

/**
 * The guardrail suites' config: project `app` (request-log bodies on, so a leak would show) with a
 * project-wide Guardrail that redacts cards and e-mail addresses and blocks a deny-listed phrase;
 * project `echo`, whose Guardrail only watches answers (the simulator's answer repeats the start
 * of the last user text, so a prompt there puts PII into the answer).
 */

export const ECHO_KEY = 'sy_live_GuardrailEchoProjectKey0123456789';
export { ADMIN_KEY, API_KEY };

/** A distinct value per place in the payload, so a leak says where it came from. */
export const PII = {
  last: 'last.turn@example.com',
  earlier: 'earlier.turn@example.com',
  toolArgs: 'tool.args@example.com',
  toolResult: 'tool.result@example.com',
  system: 'system.prompt@example.com',
  card: '4111 1111 1111 1111',
} as const;
export const DENIED = 'project bluebird';
export const ALL_VALUES: readonly string[] = [...Object.values(PII), '4111111111111111', DENIED];

export function config(simUrl: string, extra: object[] = []): object[] {
  return [
    project('app', { requestLogs: { bodies: true } }),
    ...apiKey('main', API_KEY),
    ...adminKeys(),
    project('other'),
    project('echo'),
    ...apiKey('echo', ECHO_KEY, { project: 'echo', scopes: ['ai', 'console'] }),
    ...provider('oai', 'openai', simUrl, ['gpt-4o-mini']),
    ...provider('claude', 'anthropic', simUrl, ['claude-haiku-4-5']),
    workflow('chat', { provider: 'oai', model: 'gpt-4o-mini', responseCache: { ttlSeconds: 300 } }),
    workflow('claude', { provider: 'claude', model: 'claude-haiku-4-5' }),
    workflow('memo', { provider: 'oai', model: 'gpt-4o-mini', sessionMemory: { enabled: true } }),
    workflow('embed', { provider: 'oai', model: 'gpt-4o-mini', requestType: 'embedding' }),
    workflow('complete', { provider: 'oai', model: 'gpt-4o-mini', requestType: 'completion' }),
    guardrail('pii', {
      rules: [
        { name: 'cards', type: 'card', mode: 'redact' },
        { name: 'email', type: 'email', mode: 'redact' },
        { name: 'codename', type: 'denyList', mode: 'block', words: [DENIED] },
      ],
    }),
    workflowIn('echo', 'echo-chat', { name: 'echo', provider: 'oai', model: 'gpt-4o-mini' }),
    workflowIn('echo', 'echo-claude', { name: 'echo-claude', provider: 'claude', model: 'claude-haiku-4-5' }),
    guardrail('answers', {
      projectRef: { name: 'echo' },
      rules: [
        { name: 'email', type: 'email', mode: 'redact', direction: 'output' },
        { name: 'cards', type: 'card', mode: 'block', direction: 'output' },
      ],
    }),
    ...extra,
  ];
}

/** Every key of the Redis, every value dumped as text whatever its type. */
export async function dumpRedis(url: string): Promise<{ keys: number; text: string }> {
  const c = new Redis(url);
  const out: string[] = [];
  let keys = 0;
  let cursor = '0';
  try {
    do {
      const [next, batch] = await c.scan(cursor, 'MATCH', '*', 'COUNT', '1000');
      cursor = next;
      for (const key of batch) {
        keys++;
        const type = await c.type(key);
        let value: unknown;
        if (type === 'string') value = await c.get(key);
        else if (type === 'hash') value = await c.hgetall(key);
        else if (type === 'list') value = await c.lrange(key, 0, -1);
        else if (type === 'set') value = await c.smembers(key);
        else if (type === 'zset') value = await c.zrange(key, '0', '-1');
        else if (type === 'stream') value = await c.xrange(key, '-', '+');
        out.push(`${key} ${JSON.stringify(value)}`);
      }
    } while (cursor !== '0');
  } finally {
    c.disconnect();
  }
  return { keys, text: out.join('\n') };
}

/** No raw value anywhere in `text`; `where` names the place in the failure. */
export function expectNoneOf(text: string, values: readonly string[], where: string): void {
  const found = values.filter((v) => text.includes(v));
  expect(found, `raw values in ${where}`).toEqual([]);
}

export async function allLogs(url: string, key = ADMIN_KEY): Promise<LogEntry[]> {
  return logs(url, 'limit=200', key);
}

/** What the simulator received, as text (the provider side of the gateway). */
export const upstreamText = (requests: { body?: unknown }[]): string =>
  requests.map((r) => JSON.stringify(r.body ?? null)).join('\n');
