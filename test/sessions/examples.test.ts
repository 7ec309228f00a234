/**
 * What `make run` shows offline (examples/60-sessions-cache.yaml, test mode): a session that
 * remembers, and a cache hit, through the example key, on the in-process gateway over the
 * examples folder (the same loader and compiler embedded mode uses).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { post, type Wrapped } from '../gateway/native/helpers.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { getJson, type SessionView } from './helpers.ts';

const EXAMPLES = resolve(import.meta.dirname, '../../examples');
const KEY = 'sy_live_HEUADsAxMSNV8on9X3NkkU2lkBArrZ1v';
let gw: RunningGateway;

beforeAll(async () => {
  const manifests: object[] = [];
  for (const f of (await readdir(EXAMPLES)).filter((n) => n.endsWith('.yaml')).sort())
    for (const doc of parseAllDocuments(await readFile(join(EXAMPLES, f), 'utf8'))) {
      const obj = doc.toJS() as object | null;
      if (obj) manifests.push(obj);
    }
  gw = await startGateway(manifests);
});
afterAll(async () => {
  await gw?.close();
});

it('concierge-chat remembers the conversation (test mode)', async () => {
  const first = await post<Wrapped>(
    gw.url,
    { workflow: 'concierge-chat', format: 'wrapped', messages: [{ role: 'user', content: 'I like green.' }] },
    { key: KEY },
  );
  expect(first.status).toBe(200);
  const id = first.json.meta.session_id!;
  const second = await post(
    gw.url,
    {
      workflow: 'concierge-chat',
      session_id: id,
      messages: [{ role: 'user', content: 'What colour do I like?' }],
    },
    { key: KEY },
  );
  expect(second.headers.get('x-service-session-id')).toBe(id);
  await gw.gateway.sessionWorkDone();
  const view = await getJson<SessionView>(gw.url, `/v1/sessions/${id}`, KEY);
  expect(view.json.turns.map((t) => [t.role, t.role === 'user' ? t.content : '…'])).toEqual([
    ['user', 'I like green.'],
    ['assistant', '…'],
    ['user', 'What colour do I like?'],
    ['assistant', '…'],
  ]);
});

it('faq-answers is served from the cache the second time', async () => {
  const ask = () =>
    post(
      gw.url,
      { workflow: 'faq-answers', messages: [{ role: 'user', content: 'When do you open?' }] },
      { key: KEY },
    );
  const a = await ask();
  const b = await ask();
  expect([a.headers.get('x-service-cache'), b.headers.get('x-service-cache')]).toEqual(['miss', 'hit']);
  expect(b.text).toBe(a.text);
});
