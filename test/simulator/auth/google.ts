/**
 * A fake Google OAuth 2.0 token endpoint and GCE metadata server, the two places Vertex AI access
 * tokens come from:
 *   POST /token  grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>: the RS256
 *                signature is checked against the service account's public key the simulator was
 *                given, and iss, aud (`<simulator>/token`), scope and the lifetime are checked.
 *   GET  /computeMetadata/v1/instance/service-accounts/{account}/token with `Metadata-Flavor: Google`.
 * Both answer {access_token, expires_in, token_type} with a token Vertex AI then accepts.
 */
import { createVerify } from 'node:crypto';
import type { ErrorReply, Exchange, ProviderApi } from '../exchange.ts';
import { sendJson } from '../respond.ts';

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const METADATA = /^\/computeMetadata\/v1\/instance\/service-accounts\/([^/]+)\/token$/;

const oauthError = (status: number, error: string, description: string): ErrorReply => ({
  status,
  body: { error, error_description: description },
});

function ttl(ex: Exchange): number {
  return ex.auth.opts.google?.tokenTtlSeconds ?? 3599;
}

function checkAssertion(ex: Exchange, jwt: string): string | undefined {
  const google = ex.auth.opts.google;
  if (!google) return 'Invalid JWT Signature.';
  const parts = jwt.split('.');
  if (parts.length !== 3)
    return 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe';
  const [h, c, sig] = parts as [string, string, string];
  let header: { alg?: string };
  let claims: { iss?: string; aud?: string; scope?: string; iat?: number; exp?: number };
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(c, 'base64url').toString('utf8'));
  } catch {
    return 'Invalid JWT: malformed';
  }
  if (header.alg !== 'RS256') return 'Invalid JWT: unsupported algorithm';
  const ok = createVerify('RSA-SHA256')
    .update(`${h}.${c}`)
    .verify(google.publicKey, Buffer.from(sig, 'base64url'));
  if (!ok) return 'Invalid JWT Signature.';
  if (claims.iss !== google.clientEmail) return 'Invalid issuer';
  if (claims.aud !== `${ex.baseUrl}/token`) return `Invalid JWT: audience must be ${ex.baseUrl}/token`;
  if (!claims.scope?.split(' ').includes(SCOPE)) return 'Invalid OAuth scope or ID token audience provided.';
  if (
    typeof claims.iat !== 'number' ||
    typeof claims.exp !== 'number' ||
    claims.exp <= claims.iat ||
    claims.exp - claims.iat > 3600
  )
    return 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.';
  return undefined;
}

async function handleToken(ex: Exchange): Promise<void> {
  const form = ex.body as Record<string, string>;
  if (form.grant_type !== 'urn:ietf:params:oauth:grant-type:jwt-bearer')
    return sendJsonError(ex, oauthError(400, 'unsupported_grant_type', 'Invalid grant_type'));
  const problem = checkAssertion(ex, form.assertion ?? '');
  if (problem) return sendJsonError(ex, oauthError(400, 'invalid_grant', problem));
  const seconds = ttl(ex);
  return sendJson(ex, 200, {
    access_token: ex.auth.issueBearer(seconds),
    expires_in: seconds,
    token_type: 'Bearer',
  });
}

async function handleMetadata(ex: Exchange): Promise<void> {
  const seconds = ttl(ex);
  return sendJson(ex, 200, {
    access_token: ex.auth.issueBearer(seconds),
    expires_in: seconds,
    token_type: 'Bearer',
  });
}

const sendJsonError = (ex: Exchange, r: ErrorReply) => sendJson(ex, r.status, r.body);

export const googleAuthApi: ProviderApi = {
  name: 'google-auth',
  route(method, url) {
    if (method === 'POST' && url.pathname === '/token') return { body: 'form', handle: handleToken };
    if (method === 'GET' && METADATA.test(url.pathname)) return { body: 'none', handle: handleMetadata };
    return undefined;
  },
  precheck(req, url) {
    if (url.pathname.startsWith('/computeMetadata/') && req.headers['metadata-flavor'] !== 'Google')
      return {
        status: 403,
        body: null,
        text: { contentType: 'text/html', content: 'Missing Metadata-Flavor:Google header.' },
      };
    return undefined;
  },
  error: (status, message) =>
    oauthError(status, status >= 500 ? 'internal_failure' : 'invalid_request', message ?? `HTTP ${status}`),
  invalidJson: (detail) => oauthError(400, 'invalid_request', detail),
  invalidRequest: (issues) => oauthError(400, 'invalid_request', issues[0]?.message ?? 'invalid'),
  notFound: () => oauthError(404, 'not_found', 'Not Found'),
  headers: () => ({}),
};
