/**
 * Google Cloud access tokens for Vertex AI: from a service-account key (OAuth 2.0 JWT bearer grant,
 * RFC 7523: an RS256-signed assertion posted to the token endpoint), or from the metadata server
 * (GKE workload identity). node:crypto signs the assertion; google-auth-library would bring an HTTP
 * stack of its own for what is one signature and one POST here.
 */
import { createSign } from 'node:crypto';
import type { ProviderAuth } from '#contract';
import { readText, send } from '../../upstream/http.ts';
import type { UpstreamAuth, UpstreamTarget } from '../types.ts';
import { credentialInvalid, credentialRefused, credentialTransport } from './errors.ts';
import { Refreshing, type RefreshingOptions } from './refreshing.ts';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';
const ASSERTION_SECONDS = 3600;

interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri?: string;
}

interface TokenAnswer {
  access_token?: unknown;
  expires_in?: unknown;
  error?: unknown;
  error_description?: unknown;
}

const b64url = (data: string | Buffer): string => Buffer.from(data).toString('base64url');

/** The signed JWT bearer assertion for a key, issued at `nowMs`. */
export function serviceAccountAssertion(key: ServiceAccountKey, audience: string, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000);
  const header = { alg: 'RS256', typ: 'JWT', ...(key.private_key_id ? { kid: key.private_key_id } : {}) };
  const claims = {
    iss: key.client_email,
    scope: CLOUD_PLATFORM_SCOPE,
    aud: audience,
    iat,
    exp: iat + ASSERTION_SECONDS,
  };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const signature = createSign('RSA-SHA256').update(input).sign(key.private_key);
  return `${input}.${b64url(signature)}`;
}

async function exchange(
  what: string,
  timeouts: UpstreamTarget['timeouts'],
  request: { url: string; method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  now: () => number,
): Promise<{ value: string; expiresAt: number }> {
  let text: string;
  let status: number;
  try {
    const res = await send({ target: { timeouts }, ...request, signal: new AbortController().signal });
    status = res.status;
    text = await readText(res);
  } catch (err) {
    throw credentialTransport(what, err);
  }
  let body: TokenAnswer = {};
  try {
    body = JSON.parse(text) as TokenAnswer;
  } catch {
    if (status >= 200 && status < 300) throw credentialInvalid(what, 'the answer is not JSON');
  }
  if (status < 200 || status >= 300) {
    const message =
      (typeof body.error_description === 'string' && body.error_description) ||
      (typeof body.error === 'string' && body.error) ||
      text.slice(0, 300) ||
      `HTTP ${status}`;
    throw credentialRefused(what, status, message, typeof body.error === 'string' ? body.error : undefined);
  }
  if (typeof body.access_token !== 'string' || typeof body.expires_in !== 'number')
    throw credentialInvalid(what, 'the answer has no access_token and expires_in');
  return { value: body.access_token, expiresAt: now() + body.expires_in * 1000 };
}

type ServiceAccount = Extract<ProviderAuth, { method: 'gcp-service-account' }>;
type WorkloadIdentity = Extract<ProviderAuth, { method: 'gcp-workload-identity' }>;
export type BearerAuth = Extract<UpstreamAuth, { kind: 'bearer' }> & { refreshing: Refreshing<string> };

export function serviceAccountAuth(
  auth: ServiceAccount,
  keyJson: string,
  timeouts: UpstreamTarget['timeouts'],
  opts: RefreshingOptions = {},
): BearerAuth {
  const now = opts.now ?? Date.now;
  let key: ServiceAccountKey | undefined;
  try {
    const parsed = JSON.parse(keyJson) as Partial<ServiceAccountKey>;
    if (typeof parsed.client_email === 'string' && typeof parsed.private_key === 'string')
      key = parsed as ServiceAccountKey;
  } catch {
    key = undefined;
  }
  const what = 'Google token endpoint';
  const fetch = async () => {
    if (!key) throw credentialInvalid(what, 'the service-account key has no client_email and private_key');
    const audience = key.token_uri ?? GOOGLE_TOKEN_URI;
    let assertion: string;
    try {
      assertion = serviceAccountAssertion(key, audience, now());
    } catch (err) {
      throw credentialInvalid(what, `cannot sign with the service-account key: ${(err as Error).message}`);
    }
    const form = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion,
    });
    return exchange(
      what,
      timeouts,
      {
        url: auth.tokenEndpoint ?? audience,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      },
      now,
    );
  };
  const refreshing = new Refreshing(fetch, opts);
  return { kind: 'bearer', token: (signal) => refreshing.get(signal), refreshing };
}

export function workloadIdentityAuth(
  auth: WorkloadIdentity,
  timeouts: UpstreamTarget['timeouts'],
  opts: RefreshingOptions = {},
): BearerAuth {
  const now = opts.now ?? Date.now;
  const base = auth.metadataEndpoint.replace(/\/+$/, '');
  const url = `${base}/computeMetadata/v1/instance/service-accounts/${encodeURIComponent(auth.serviceAccount)}/token`;
  const fetch = () =>
    exchange(
      'metadata server',
      timeouts,
      { url, method: 'GET', headers: { 'metadata-flavor': 'Google' } },
      now,
    );
  const refreshing = new Refreshing(fetch, opts);
  return { kind: 'bearer', token: (signal) => refreshing.get(signal), refreshing };
}
