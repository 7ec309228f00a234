import { createHash, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { checkWrite } from '../console-web/sessions.ts';
import type { ConsoleSessionStore } from '../console-web/store.ts';
import { GatewayError } from '../errors/index.ts';
import { type KubeIdentity, kubeIdentity } from './identity.ts';

/**
 * Sessions of Kubernetes identities: the cookie names a record holding who TokenReview said the
 * token belongs to and the CSRF token, never the bearer token (every check after sign-in is a
 * SubjectAccessReview made by the gateway, so the token is not needed again). Its own cookie, so a
 * key session and an identity session never read each other's records.
 */
export const KUBE_SESSION_COOKIE = 'sy_console_k8s';

const record = z.object({ identity: kubeIdentity, csrf: z.string() });
export type KubeSession = z.infer<typeof record>;

const digest = (t: string): string => createHash('sha256').update(t).digest('hex');
const token = (bytes: number): string => randomBytes(bytes).toString('base64url');
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

const expired = () =>
  new GatewayError('invalid_api_key', 'The console session has expired or was signed out.', {
    hint: 'Sign in to the console again with a Kubernetes token.',
  });

function cookieOf(req: FastifyRequest): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === KUBE_SESSION_COOKIE) {
      const v = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{20,100}$/.test(v) ? v : undefined;
    }
  }
  return undefined;
}

export class KubeSessions {
  readonly #store: ConsoleSessionStore;
  readonly #ttlMs: number;
  readonly #attempts: number;
  readonly #windowMs: number;

  constructor(store: ConsoleSessionStore, o: { ttlMs?: number; attempts?: number; windowMs?: number } = {}) {
    this.#store = store;
    this.#ttlMs = o.ttlMs ?? 8 * 3_600_000;
    this.#attempts = o.attempts ?? 10;
    this.#windowMs = o.windowMs ?? 60_000;
  }

  async attempt(ip: string): Promise<void> {
    if ((await this.#store.hit(`ka:${ip}`, this.#windowMs)) > this.#attempts)
      throw new GatewayError('rate_limit_exceeded', 'Too many sign-in attempts; wait a minute.', {
        retryAfterSeconds: Math.ceil(this.#windowMs / 1000),
      });
  }

  async start(identity: KubeIdentity): Promise<{ cookie: string; csrf: string; maxAgeS: number }> {
    const cookie = token(32);
    const rec: KubeSession = { identity, csrf: token(24) };
    await this.#store.put(`k:${digest(cookie)}`, JSON.stringify(rec), this.#ttlMs);
    return { cookie, csrf: rec.csrf, maxAgeS: Math.floor(this.#ttlMs / 1000) };
  }

  /** The session of a request; writes must carry its CSRF token from the console's own origin. */
  async current(req: FastifyRequest): Promise<KubeSession> {
    const cookie = cookieOf(req);
    if (!cookie) throw expired();
    const raw = await this.#store.get(`k:${digest(cookie)}`);
    const parsed = raw === undefined ? undefined : record.safeParse(JSON.parse(raw));
    if (!parsed?.success) throw expired();
    if (!SAFE.has(req.method)) checkWrite(req, parsed.data);
    return parsed.data;
  }

  async end(req: FastifyRequest): Promise<void> {
    const cookie = cookieOf(req);
    if (!cookie) return;
    await this.current(req);
    await this.#store.delete(`k:${digest(cookie)}`);
  }
}

/** HttpOnly, SameSite=Strict, Secure behind TLS, scoped to the gateway's base path. */
export function setKubeCookie(
  req: FastifyRequest,
  reply: FastifyReply,
  basePath: string,
  value: string,
  maxAgeS: number,
): void {
  const tls =
    req.protocol === 'https' || req.headers['x-forwarded-proto']?.toString().split(',')[0] === 'https';
  void reply.header(
    'set-cookie',
    [
      `${KUBE_SESSION_COOKIE}=${value}`,
      `Path=${basePath}/`,
      `Max-Age=${maxAgeS}`,
      'HttpOnly',
      'SameSite=Strict',
      ...(tls ? ['Secure'] : []),
    ].join('; '),
  );
}
