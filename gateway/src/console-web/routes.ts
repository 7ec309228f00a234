import { readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { authenticate, requireScope } from '../auth/authenticate.ts';
import { GatewayError } from '../errors/index.ts';
import type { Pipeline } from '../pipeline/run.ts';
import { invalidRequest } from '../requests/zod-error.ts';
import type { SnapshotStore } from '../snapshot/store.ts';
import { pipelineSimRoute } from './pipeline-sim.ts';
import { playgroundRoute } from './playground.ts';
import type { ConsoleWebReads } from './reads.ts';
import { basePathOf, type ConsoleSessions, SESSION_COOKIE, setSessionCookie } from './sessions.ts';
import { type BundleFile, indexBundle, SECURITY_HEADERS } from './static.ts';
import { tailRoute } from './tail.ts';
import { viewRoutes } from './views.ts';

export interface ConsoleWebRoutesOptions {
  dir: string;
  basePath: string | undefined;
  sessions: ConsoleSessions;
  snapshots: SnapshotStore;
  now: () => number;
  pipeline: Pipeline;
  reads: ConsoleWebReads;
  tailPollMs?: number | undefined;
  tailsPerProject?: number | undefined;
  simulatedBackendMs?: number | undefined;
}

const signIn = z.union([
  z.object({ key: z.string().min(1).max(300) }).strict(),
  z.object({ link: z.string().min(1).max(100) }).strict(),
]);

const runtimeOf = (snapshots: SnapshotStore) => {
  const rt = snapshots.current;
  if (!rt)
    throw new GatewayError('service_unavailable', 'The gateway has no configuration loaded yet.', {
      retryAfterSeconds: 1,
    });
  return rt;
};

async function sendFile(req: FastifyRequest, reply: FastifyReply, file: BundleFile): Promise<FastifyReply> {
  const gzip = file.gzip && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '');
  void reply
    .type(file.type)
    .header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
    .header('vary', 'accept-encoding');
  if (gzip) void reply.header('content-encoding', 'gzip');
  return reply.send(await readFile(gzip ? `${file.path}.gz` : file.path));
}

/**
 * The console under /console/ (registered with that prefix): the built pages from disk, and the
 * session endpoints. The pages call the ordinary APIs (/v1/request-logs, /api/console/...) with
 * the session cookie instead of a key (app.ts asks the session when a console route has no key).
 */
export async function consoleWebRoutes(app: FastifyInstance, opts: ConsoleWebRoutesOptions): Promise<void> {
  const { sessions, snapshots, now } = opts;
  const files = await indexBundle(opts.dir);

  app.addHook('onSend', (_req, reply, payload, done) => {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) void reply.header(k, v);
    done(null, payload);
  });

  app.get('/', async (req, reply) => {
    // Relative URLs in the page resolve against /console/, so /console is sent there, relatively:
    // behind a path prefix the browser keeps its prefix.
    if (!req.url.split('?')[0]!.endsWith('/')) return reply.code(308).header('location', 'console/').send();
    return sendFile(req, reply, files.get('index.html')!);
  });

  app.get<{ Params: { '*': string } }>('/*', async (req, reply) => {
    const file = files.get(req.params['*']);
    if (!file || file.path.endsWith('index.html'))
      throw new GatewayError('not_found', `No console file ${req.params['*']}.`);
    return sendFile(req, reply, file);
  });

  playgroundRoute(app, opts.pipeline);
  pipelineSimRoute(app, opts.pipeline, { backendMs: opts.simulatedBackendMs ?? 1500, now });
  viewRoutes(app, { snapshots, guard: opts.reads.guard, now });
  tailRoute(app, {
    state: opts.reads.state,
    now,
    ...(opts.tailPollMs === undefined ? {} : { pollMs: opts.tailPollMs }),
    ...(opts.tailsPerProject === undefined ? {} : { perProject: opts.tailsPerProject }),
  });

  app.post('/api/session', async (req, reply) => {
    await sessions.attempt(req.ip);
    const parsed = signIn.safeParse(req.body ?? {});
    if (!parsed.success) throw invalidRequest(parsed.error);
    const runtime = runtimeOf(snapshots);
    const body = parsed.data;
    let auth: ReturnType<typeof authenticate>;
    if ('key' in body) {
      auth = authenticate(`Bearer ${body.key}`, runtime, now());
      requireScope(auth, 'console');
    } else {
      const grant = await sessions.redeem(body.link);
      const key = grant && runtime.keys.get(grant.keyHash);
      const project = key && runtime.projects.get(key.projectId);
      if (!grant || !key || !project || key.notAfterMs <= now())
        throw new GatewayError('invalid_api_key', 'This sign-in link was already used or has expired.', {
          hint: 'Sign in with a key that has the console scope.',
        });
      auth = { key, keyHash: grant.keyHash, project };
      requireScope(auth, 'console');
    }
    const session = await sessions.start(auth);
    setSessionCookie(req, reply, basePathOf(req, opts.basePath), session.cookie, session.maxAgeS);
    void reply.header('cache-control', 'no-store');
    return {
      object: 'console_session',
      project_id: auth.project.config.id,
      key_id: auth.key.keyId,
      csrf_token: session.csrf,
      snapshot_version: runtime.version,
    };
  });

  app.get('/api/session', async (req, reply) => {
    const runtime = runtimeOf(snapshots);
    const { auth, csrf } = await sessions.current(req, runtime, now());
    void reply.header('cache-control', 'no-store');
    return {
      object: 'console_session',
      project_id: auth.project.config.id,
      key_id: auth.key.keyId,
      csrf_token: csrf,
      // The configuration this pod serves now: the "served" side of declared vs served.
      snapshot_version: runtime.version,
    };
  });

  app.delete('/api/session', async (req, reply) => {
    await sessions.end(req);
    void reply.header(
      'set-cookie',
      `${SESSION_COOKIE}=; Path=${basePathOf(req, opts.basePath)}/; Max-Age=0; HttpOnly; SameSite=Strict`,
    );
    return reply.code(204).send();
  });
}
