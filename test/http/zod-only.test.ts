/**
 * The schema controller without JSON-schema compilers (http/zod-only.ts): routes that validate with
 * zod themselves run as usual; a route that declares a Fastify schema fails the app's start, naming
 * why, rather than being validated in a second vocabulary.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ZOD_ONLY } from '#gateway/http/zod-only';

const app = () => Fastify({ schemaController: ZOD_ONLY });

describe('ZOD_ONLY', () => {
  it('routes without a schema are served', async () => {
    const a = app();
    a.post('/echo', async (req) => ({ got: req.body, q: req.query }));
    const r = await a.inject({ method: 'POST', url: '/echo?x=1', payload: { a: [1, 2] } });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ got: { a: [1, 2] }, q: { x: '1' } });
    await a.close();
  });

  it.each([
    ['body', { body: { type: 'object' } }, 'validation'],
    ['querystring', { querystring: { type: 'object' } }, 'validation'],
    ['params', { params: { type: 'object' } }, 'validation'],
    ['response', { response: { 200: { type: 'object' } } }, 'response'],
  ])('a route declaring a %s schema fails the start, naming the reason', async (_what, schema, kind) => {
    const a = app();
    a.post('/x', { schema }, async () => ({}));
    await expect(a.ready()).rejects.toThrow(
      `a route declared a ${kind} schema: the gateway validates with zod in the route and loads no JSON-schema compiler`,
    );
    await a.close().catch(() => undefined);
  });
});
