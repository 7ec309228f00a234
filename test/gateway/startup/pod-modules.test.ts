/**
 * Pod memory, what a running gateway loads: not Fastify's JSON-schema compilers (Ajv,
 * fast-json-stringify), since the gateway validates with zod, and a route that declares a schema
 * fails when the app is built; Ajv itself only with the first structured-output schema, for the
 * gateway's own check of the answer; of undici, only the dispatchers it calls, not its entry point;
 * and not Node's bundled undici, which an ESM import of node:http loads.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ZOD_ONLY } from '#gateway/http/zod-only';

const NODE = join(process.cwd(), 'node_modules/.bin/node');

describe('what a gateway pod loads', () => {
  it('no JSON-schema compiler, no undici entry point and no Node-bundled undici serving answers, refusals and metrics; Ajv comes with the first schema', () => {
    const child = spawnSync(
      NODE,
      ['--disable-warning=ExperimentalWarning', 'test/gateway/startup/fixtures/pod-modules-child.ts'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(child.status, child.stderr).toBe(0);
    const out = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as {
      nodeUndiciAfter: string | null;
      before: string[];
      after: string[];
      statuses: number[];
    };
    console.log(
      `watched modules resolved: ${out.before.length} before a schema, then ${out.after.join(', ')}; statuses ${out.statuses.join(', ')}`,
    );
    expect(out.statuses).toEqual([200, 400, 404, 200, 200]);
    // The name of the first entry-point import after which Node's bundled undici was loaded.
    expect(out.nodeUndiciAfter).toBeNull();
    expect(out.before).toEqual([]);
    expect(out.after).toContain('ajv <- gateway/src/structured/validate.ts');
    expect(out.after.filter((p) => !p.startsWith('ajv '))).toEqual([]);
  });

  it('a route that declares a schema fails when the app is built, saying why', async () => {
    const app = Fastify({ schemaController: ZOD_ONLY });
    app.post('/x', { schema: { body: { type: 'object' } } }, async () => ({}));
    await expect(app.ready()).rejects.toThrow(/validates with zod/);
    const answers = Fastify({ schemaController: ZOD_ONLY });
    answers.get('/y', { schema: { response: { 200: { type: 'object' } } } }, async () => ({}));
    await expect(answers.ready()).rejects.toThrow(/response schema/);
  });
});
