/**
 * AWS credentials for Bedrock: a key pair from a Secret, or the pod's web identity exchanged for
 * temporary keys with STS AssumeRoleWithWebIdentity (EKS IRSA). The exchange is one unsigned form
 * POST; its XML answer has four text fields, read by name (no XML library is loaded for them).
 */
import { readFile } from 'node:fs/promises';
import type { ProviderAuth } from '#contract';
import { readText, send } from '../../upstream/http.ts';
import type { AwsCredentials, UpstreamAuth, UpstreamTarget } from '../types.ts';
import { credentialInvalid, credentialRefused, credentialTransport } from './errors.ts';
import { Refreshing, type RefreshingOptions } from './refreshing.ts';

export const DEFAULT_WEB_IDENTITY_TOKEN_FILE = '/var/run/secrets/eks.amazonaws.com/serviceaccount/token';
/** STS's own default; shorter sessions only mean more exchanges. */
const SESSION_SECONDS = 3600;

export function staticAwsAuth(secret: string): UpstreamAuth {
  let creds: AwsCredentials;
  try {
    const parsed = JSON.parse(secret) as Partial<AwsCredentials>;
    if (typeof parsed.accessKeyId !== 'string' || typeof parsed.secretAccessKey !== 'string')
      throw new Error('accessKeyId and secretAccessKey are required');
    creds = {
      accessKeyId: parsed.accessKeyId,
      secretAccessKey: parsed.secretAccessKey,
      ...(typeof parsed.sessionToken === 'string' ? { sessionToken: parsed.sessionToken } : {}),
    };
  } catch (err) {
    const error = credentialInvalid('AWS access keys', err instanceof Error ? err.message : String(err));
    return { kind: 'aws', credentials: () => Promise.reject(error) };
  }
  return { kind: 'aws', credentials: () => Promise.resolve(creds) };
}

type WebIdentity = Extract<ProviderAuth, { method: 'aws-web-identity' }>;

export interface WebIdentityOptions extends RefreshingOptions {
  env?: Record<string, string | undefined>;
}

/** AWS's STS hosts (regional, global, FIPS, China). */
const AWS_STS = /^https:\/\/sts(-fips)?(\.[a-z0-9-]+)?\.amazonaws\.com(\.cn)?\/?$/;

/**
 * The exchange sends the pod's own identity token, so a Provider (which any namespace may write)
 * must not be able to send it elsewhere, nor to send the contents of another file. Unless the
 * operator of the gateway allows overrides (SWITCHYARD_CREDENTIAL_ENDPOINT_OVERRIDES=true: private
 * endpoints, test doubles), the token goes only to AWS STS and only the pod's token file is read.
 */
function guard(
  auth: WebIdentity,
  tokenFile: string,
  env: Record<string, string | undefined>,
): string | undefined {
  if (env.SWITCHYARD_CREDENTIAL_ENDPOINT_OVERRIDES === 'true') return undefined;
  if (!AWS_STS.test(auth.stsEndpoint))
    return `endpoints.sts ${auth.stsEndpoint} is not an AWS STS endpoint (SWITCHYARD_CREDENTIAL_ENDPOINT_OVERRIDES=true on the gateway allows it)`;
  const podFile = env.AWS_WEB_IDENTITY_TOKEN_FILE ?? DEFAULT_WEB_IDENTITY_TOKEN_FILE;
  if (tokenFile !== podFile)
    return `webIdentity.tokenFile ${tokenFile} is not the pod's token file ${podFile} (SWITCHYARD_CREDENTIAL_ENDPOINT_OVERRIDES=true on the gateway allows it)`;
  return undefined;
}

const unescapeXml = (s: string): string =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

function xmlField(xml: string, name: string): string | undefined {
  const m = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  return m ? unescapeXml(m[1] as string).trim() : undefined;
}

/** Parses an AssumeRoleWithWebIdentity answer (XML, or JSON when a proxy asked for it). */
export function parseStsCredentials(text: string): AwsCredentials & { expiresAt: number } {
  let id: string | undefined;
  let secret: string | undefined;
  let token: string | undefined;
  let expiration: string | number | undefined;
  if (text.trimStart().startsWith('{')) {
    const body = JSON.parse(text) as {
      AssumeRoleWithWebIdentityResponse?: {
        AssumeRoleWithWebIdentityResult?: {
          Credentials?: {
            AccessKeyId?: string;
            SecretAccessKey?: string;
            SessionToken?: string;
            Expiration?: string | number;
          };
        };
      };
    };
    const c = body.AssumeRoleWithWebIdentityResponse?.AssumeRoleWithWebIdentityResult?.Credentials;
    id = c?.AccessKeyId;
    secret = c?.SecretAccessKey;
    token = c?.SessionToken;
    // The JSON form gives epoch seconds.
    expiration = typeof c?.Expiration === 'number' ? c.Expiration * 1000 : c?.Expiration;
  } else {
    id = xmlField(text, 'AccessKeyId');
    secret = xmlField(text, 'SecretAccessKey');
    token = xmlField(text, 'SessionToken');
    expiration = xmlField(text, 'Expiration');
  }
  const expiresAt = typeof expiration === 'number' ? expiration : Date.parse(expiration ?? '');
  if (!id || !secret || !token || Number.isNaN(expiresAt))
    throw new Error('the answer has no Credentials (AccessKeyId, SecretAccessKey, SessionToken, Expiration)');
  return { accessKeyId: id, secretAccessKey: secret, sessionToken: token, expiresAt };
}

/** The web identity exchange, renewed ahead of expiry. `refreshing` is exposed for tests and metrics. */
export function webIdentityAuth(
  auth: WebIdentity,
  timeouts: UpstreamTarget['timeouts'],
  opts: WebIdentityOptions = {},
): Extract<UpstreamAuth, { kind: 'aws' }> & { refreshing: Refreshing<AwsCredentials> } {
  const env = opts.env ?? process.env;
  const now = opts.now ?? Date.now;
  const what = 'STS AssumeRoleWithWebIdentity';
  const fetch = async () => {
    const roleArn = auth.roleArn ?? env.AWS_ROLE_ARN;
    const tokenFile = auth.tokenFile ?? env.AWS_WEB_IDENTITY_TOKEN_FILE ?? DEFAULT_WEB_IDENTITY_TOKEN_FILE;
    if (!roleArn) throw credentialInvalid(what, 'no role ARN (webIdentity.roleArn, or AWS_ROLE_ARN)');
    const refused = guard(auth, tokenFile, env);
    if (refused) throw credentialInvalid(what, refused);
    let token: string;
    try {
      token = (await readFile(tokenFile, 'utf8')).trim();
    } catch (err) {
      throw credentialInvalid(
        what,
        `cannot read the web identity token ${tokenFile}: ${(err as Error).message}`,
      );
    }
    const form = new URLSearchParams({
      Action: 'AssumeRoleWithWebIdentity',
      Version: '2011-06-15',
      RoleArn: roleArn,
      RoleSessionName: auth.sessionName,
      WebIdentityToken: token,
      DurationSeconds: String(SESSION_SECONDS),
    });
    let text: string;
    let status: number;
    try {
      const res = await send({
        target: { timeouts },
        url: auth.stsEndpoint.endsWith('/') ? auth.stsEndpoint : `${auth.stsEndpoint}/`,
        headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
        body: form.toString(),
        signal: new AbortController().signal,
      });
      status = res.status;
      text = await readText(res);
    } catch (err) {
      throw credentialTransport(what, err);
    }
    if (status < 200 || status >= 300)
      throw credentialRefused(
        what,
        status,
        xmlField(text, 'Message') ?? (text.slice(0, 300) || `HTTP ${status}`),
        xmlField(text, 'Code'),
      );
    try {
      const creds = parseStsCredentials(text);
      // The lifetime left, on the cache's clock (the same as the wall clock outside tests).
      const expiresAt = now() + (creds.expiresAt - Date.now());
      return { value: { ...creds, expiresAt }, expiresAt };
    } catch (err) {
      throw credentialInvalid(what, (err as Error).message);
    }
  };
  const refreshing = new Refreshing(fetch, opts);
  return { kind: 'aws', credentials: (signal) => refreshing.get(signal), refreshing };
}
