import type { FastifyRequest } from 'fastify';
import type { Runtime } from '../snapshot/runtime.ts';
import type { AuthContext } from './authenticate.ts';

/**
 * The browser's alternative to a bearer key on `console`-scope routes: a session cookie the
 * console's sign-in set (console-web/sessions.ts). Asked only when a console route carries no
 * Authorization header, so no other request pays for it.
 */
export interface CookieAuthenticator {
  /**
   * The session's key, re-checked against this snapshot (a revoked key ends its sessions), with
   * CSRF checked on writes; undefined when the request carries no session cookie.
   */
  authenticate(req: FastifyRequest, runtime: Runtime, now: number): Promise<AuthContext> | undefined;
}
