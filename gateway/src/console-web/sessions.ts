import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AuthContext } from '../auth/authenticate.ts';
import type { CookieAuthenticator } from '../auth/session.ts';
import { GatewayError } from '../errors/index.ts';
import type { Runtime } from '../snapshot/runtime.ts';
import type { ConsoleSessionStore } from './store.ts';

export const SESSION_COOKIE = 'sy_console';
export const CSRF_HEADER = 'x-csrf-token';

/** What a session holds: whose key signed in, never the key. */
const record = z.object({ keyHash: z.string(), projectId: z.string(), csrf: z.string() });
type SessionRecord = z.infer<typeof record>;
const grant = z.object({ keyHash: z.string(), projectId: z.string() });

const digest = (token: string): string => createHash('sha256').update(token).digest('hex');
const token = (bytes: number): string => randomBytes(bytes).toString('base64url');
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface SessionLimits {
  /** A session lasts this long from sign-in. */
  ttlMs: number;
  /** Sign-in attempts one client address may make per window. */
  attempts: number;
  attemptWindowMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  ttlMs: 8 * 3_600_000,
  attempts: 10,
  attemptWindowMs: 60_000,
};

/** The session cookie's value in a request, if any. */
export function sessionCookieOf(req: FastifyRequest): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const v = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{20,100}$/.test(v) ? v : undefined;
    }
  }
  return undefined;
}

const invalidSession = () =>
  new GatewayError('invalid_api_key', 'The console session has expired or was signed out.', {
    hint: 'Sign in to the console again.',
  });

/** The key behind a session, as authenticate() would find it in this snapshot. */
function authOfRecord(rec: SessionRecord, runtime: Runtime, now: number): AuthContext {
  const key = runtime.keys.get(rec.keyHash);
  if (!key || key.notAfterMs <= now || key.projectId !== rec.projectId || !key.scopes.includes('console'))
    throw invalidSession();
  const project = runtime.projects.get(key.projectId);
  if (!project) throw invalidSession();
  return { key, keyHash: rec.keyHash, project };
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * A write must come from the console's own pages: the CSRF token the session was given, sent in a
 * header (a cross-site form cannot set one, a cross-site script cannot read the token), and a
 * browser's Origin naming this host. SameSite=Strict on the cookie is the third fence.
 */
export function checkWrite(req: FastifyRequest, rec: { csrf: string }): void {
  const sent = req.headers[CSRF_HEADER];
  if (typeof sent !== 'string' || !sameText(sent, rec.csrf))
    throw new GatewayError('insufficient_permission', 'Missing or wrong CSRF token.', {
      hint: `Send the session's csrf_token in the ${CSRF_HEADER} header.`,
    });
  const origin = req.headers.origin;
  const host = (req.headers['x-forwarded-host'] as string | undefined)?.split(',')[0]?.trim() ?? req.host;
  if (origin !== undefined && (origin === 'null' || URL.parse(origin)?.host !== host))
    throw new GatewayError('insufficient_permission', 'Cross-origin writes are refused.');
  const site = req.headers['sec-fetch-site'];
  if (origin === undefined && site !== undefined && site !== 'same-origin')
    throw new GatewayError('insufficient_permission', 'Cross-site writes are refused.');
}

/** Browser sessions of the console: sign-in with a key or a one-time link, the cookie, CSRF. */
export class ConsoleSessions implements CookieAuthenticator {
  readonly #store: ConsoleSessionStore;
  readonly #limits: SessionLimits;

  constructor(store: ConsoleSessionStore, limits: Partial<SessionLimits> = {}) {
    this.#store = store;
    this.#limits = { ...DEFAULT_SESSION_LIMITS, ...limits };
  }

  /** A one-time sign-in link's token for a console-scope key (embedded mode prints it). */
  async issueLink(auth: { keyHash: string; projectId: string }, ttlMs: number): Promise<string> {
    const t = `syl_${token(24)}`;
    await this.#store.put(`l:${digest(t)}`, JSON.stringify(grant.parse(auth)), ttlMs);
    return t;
  }

  /** Redeems a link: the first browser to present it gets its grant, every later one nothing. */
  async redeem(link: string): Promise<{ keyHash: string; projectId: string } | undefined> {
    const raw = await this.#store.take(`l:${digest(link)}`);
    return raw === undefined ? undefined : grant.parse(JSON.parse(raw));
  }

  /** Counts a sign-in attempt from a client address; throws 429 past the limit. */
  async attempt(ip: string): Promise<void> {
    const n = await this.#store.hit(`a:${ip}`, this.#limits.attemptWindowMs);
    if (n > this.#limits.attempts)
      throw new GatewayError('rate_limit_exceeded', 'Too many sign-in attempts; wait a minute.', {
        retryAfterSeconds: Math.ceil(this.#limits.attemptWindowMs / 1000),
      });
  }

  /** Starts a session for an authenticated console key; returns the cookie value and CSRF token. */
  async start(auth: AuthContext): Promise<{ cookie: string; csrf: string; maxAgeS: number }> {
    const cookie = token(32);
    const rec: SessionRecord = { keyHash: auth.keyHash, projectId: auth.project.config.id, csrf: token(24) };
    await this.#store.put(`s:${digest(cookie)}`, JSON.stringify(rec), this.#limits.ttlMs);
    return { cookie, csrf: rec.csrf, maxAgeS: Math.floor(this.#limits.ttlMs / 1000) };
  }

  async #record(cookie: string): Promise<SessionRecord> {
    const raw = await this.#store.get(`s:${digest(cookie)}`);
    const parsed = raw === undefined ? undefined : record.safeParse(JSON.parse(raw));
    if (!parsed?.success) throw invalidSession();
    return parsed.data;
  }

  /** The signed-in session of a request, with its CSRF token (the console's own pages read it). */
  async current(req: FastifyRequest, runtime: Runtime, now: number) {
    const cookie = sessionCookieOf(req);
    if (!cookie) throw invalidSession();
    const rec = await this.#record(cookie);
    return { auth: authOfRecord(rec, runtime, now), csrf: rec.csrf };
  }

  async end(req: FastifyRequest): Promise<void> {
    const cookie = sessionCookieOf(req);
    if (!cookie) return;
    checkWrite(req, await this.#record(cookie));
    await this.#store.delete(`s:${digest(cookie)}`);
  }

  authenticate(req: FastifyRequest, runtime: Runtime, now: number): Promise<AuthContext> | undefined {
    const cookie = sessionCookieOf(req);
    if (!cookie) return undefined;
    return this.#record(cookie).then((rec) => {
      if (!SAFE_METHODS.has(req.method)) checkWrite(req, rec);
      return authOfRecord(rec, runtime, now);
    });
  }
}

/** Where the gateway is mounted as the browser sees it: configured, or the proxy's X-Forwarded-Prefix. */
export function basePathOf(req: FastifyRequest, configured: string | undefined): string {
  if (configured !== undefined) return configured;
  const prefix = req.headers['x-forwarded-prefix'];
  return typeof prefix === 'string' && /^(\/[A-Za-z0-9._~-]+)+$/.test(prefix) ? prefix : '';
}

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site sends it),
 * Secure behind TLS, scoped to the gateway's base path.
 */
export function setSessionCookie(
  req: FastifyRequest,
  reply: FastifyReply,
  basePath: string,
  value: string,
  maxAgeS: number,
): void {
  const tls =
    req.protocol === 'https' || req.headers['x-forwarded-proto']?.toString().split(',')[0] === 'https';
  const parts = [
    `${SESSION_COOKIE}=${value}`,
    `Path=${basePath}/`,
    `Max-Age=${maxAgeS}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(tls ? ['Secure'] : []),
  ];
  void reply.header('set-cookie', parts.join('; '));
}
