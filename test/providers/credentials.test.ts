/**
 * Credentials that expire, on an injected clock: Bedrock's web identity (STS
 * AssumeRoleWithWebIdentity) and Vertex AI's access tokens (service-account key, metadata server),
 * each exchanged at the simulator's fake endpoint and then accepted, or refused, by the simulated
 * provider. Renewal happens 5 minutes before expiry, in the background while the current one is
 * valid; concurrent requests share one exchange.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { webIdentityAuth } from '#gateway/providers/auth/aws';
import { serviceAccountAuth, workloadIdentityAuth } from '#gateway/providers/auth/gcp';
import { getAdapter } from '#gateway/providers/registry';
import type { ChatResult } from '#gateway/providers/types';
import { closeUpstreamPools } from '#gateway/upstream/http';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { ctx, failure, makeTarget, simpleChat } from './helpers.ts';

const TIMEOUTS = { connectMs: 1000, firstByteMs: 3000, totalMs: 5000 };
const ROLE = 'arn:aws:iam::123456789012:role/switchyard-gateway';
const WEB_TOKEN = 'eyJhbGciOiJSUzI1NiJ9.projected-service-account-token.sig';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const CLIENT_EMAIL = 'gateway@sim-project.iam.gserviceaccount.com';
const MIN = 60_000;
/** The simulator stands in for STS, at a local URL with a token file of the test's own. */
const OVERRIDES = { SWITCHYARD_CREDENTIAL_ENDPOINT_OVERRIDES: 'true' };

let sim: Simulator;
let dir: string;
let tokenFile: string;

beforeAll(async () => {
  sim = await startSimulator({
    webIdentity: { token: WEB_TOKEN, durationSeconds: 3600 },
    google: {
      clientEmail: CLIENT_EMAIL,
      publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      tokenTtlSeconds: 3600,
    },
  });
  dir = await mkdtemp(join(tmpdir(), 'switchyard-creds-'));
  tokenFile = join(dir, 'token');
});
afterAll(async () => {
  await closeUpstreamPools();
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  sim.clearFaults();
  sim.clearRequests();
  await writeFile(tokenFile, `${WEB_TOKEN}\n`);
});

const stsCalls = () => sim.requests().filter((r) => r.provider === 'aws-sts');
const googleCalls = () => sim.requests().filter((r) => r.provider === 'google-auth');

function clock() {
  const c = { t: Date.now(), now: () => c.t };
  return c;
}

describe('Bedrock web identity (AssumeRoleWithWebIdentity)', () => {
  const make = (now: () => number) =>
    webIdentityAuth(
      {
        method: 'aws-web-identity',
        roleArn: ROLE,
        tokenFile,
        sessionName: 'switchyard',
        stsEndpoint: `${sim.url}/sts`,
      },
      TIMEOUTS,
      { now, env: OVERRIDES },
    );

  it('exchanges the projected token, and Bedrock accepts the temporary keys it got', async () => {
    const c = clock();
    const auth = make(c.now);
    const target = makeTarget('bedrock', sim.url, 'amazon.nova-lite-v1:0', {
      apiKey: '',
      auth,
      options: { region: 'eu-west-1' },
    });
    const res = (await getAdapter('bedrock').call(
      target,
      simpleChat('signed with STS keys'),
      ctx(),
    )) as ChatResult;
    expect(res.content).toContain('signed with STS keys');
    expect(stsCalls()).toHaveLength(1);
    expect(stsCalls()[0]!.body).toEqual({
      Action: 'AssumeRoleWithWebIdentity',
      Version: '2011-06-15',
      RoleArn: ROLE,
      RoleSessionName: 'switchyard',
      WebIdentityToken: WEB_TOKEN,
      DurationSeconds: '3600',
    });
    const bedrock = sim.requests().find((r) => r.provider === 'bedrock')!;
    expect(bedrock.headers['x-amz-security-token']).toBe('<redacted>');
  });

  it('keeps the keys until 5 minutes before expiry, renews in the background then, and serves the new ones', async () => {
    const c = clock();
    const auth = make(c.now);
    const first = await auth.credentials(new AbortController().signal);
    expect(first.expiresAt! - c.t).toBeGreaterThan(59 * MIN);
    c.t += 50 * MIN;
    expect(await auth.credentials(new AbortController().signal)).toBe(first);
    expect(auth.refreshing.fetches).toBe(1);
    c.t += 6 * MIN; // 4 minutes left: due
    expect(await auth.credentials(new AbortController().signal)).toBe(first); // still valid: no wait
    await auth.refreshing.settled();
    expect(auth.refreshing.fetches).toBe(2);
    const second = await auth.credentials(new AbortController().signal);
    expect(second.accessKeyId).not.toBe(first.accessKeyId);
    expect(stsCalls()).toHaveLength(2);
    console.log(`web identity: ${auth.refreshing.fetches} STS exchanges over 56 simulated minutes`);
  });

  it('concurrent first requests share one exchange', async () => {
    const auth = make(clock().now);
    const all = await Promise.all(
      Array.from({ length: 10 }, () => auth.credentials(new AbortController().signal)),
    );
    expect(new Set(all.map((a) => a.accessKeyId)).size).toBe(1);
    expect(stsCalls()).toHaveLength(1);
  });

  it('a failed renewal keeps the valid keys; once they expire the refusal surfaces as a 401, not retryable', async () => {
    const c = clock();
    const auth = make(c.now);
    const first = await auth.credentials(new AbortController().signal);
    await writeFile(tokenFile, 'a-token-sts-does-not-accept');
    c.t += 57 * MIN;
    expect(await auth.credentials(new AbortController().signal)).toBe(first);
    await auth.refreshing.settled();
    c.t += 4 * MIN; // past expiry
    const err = await failure(() => auth.credentials(new AbortController().signal));
    expect(err.code).toBe('UPSTREAM_STATUS');
    expect(err.status).toBe(401);
    expect(err.providerCode).toBe('InvalidIdentityToken');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('STS AssumeRoleWithWebIdentity answered 400');
  });

  it('STS unavailable → retryable (the next slot may not need it)', async () => {
    sim.addFault({ match: { provider: 'aws-sts' }, status: 503, times: 1 });
    const err = await failure(() => make(clock().now).credentials(new AbortController().signal));
    expect([err.code, err.status, err.retryable]).toEqual(['UPSTREAM_STATUS', 503, true]);
  });

  it('without a role ARN (no webIdentity.roleArn, no AWS_ROLE_ARN) → a clear 401', async () => {
    const auth = webIdentityAuth(
      { method: 'aws-web-identity', tokenFile, sessionName: 's', stsEndpoint: `${sim.url}/sts` },
      TIMEOUTS,
      { env: OVERRIDES },
    );
    const err = await failure(() => auth.credentials(new AbortController().signal));
    expect(err.status).toBe(401);
    expect(err.message).toContain('AWS_ROLE_ARN');
    expect(stsCalls()).toEqual([]);
  });

  it("without overrides allowed, the pod's token goes to AWS STS only and no other file is read", async () => {
    const at = (stsEndpoint: string, file: string) =>
      failure(() =>
        webIdentityAuth(
          { method: 'aws-web-identity', roleArn: ROLE, tokenFile: file, sessionName: 's', stsEndpoint },
          TIMEOUTS,
          {
            env: { AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile },
          },
        ).credentials(new AbortController().signal),
      );
    const elsewhere = await at(`${sim.url}/sts`, tokenFile);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.message).toContain('is not an AWS STS endpoint');
    const otherFile = await at(
      'https://sts.eu-west-1.amazonaws.com',
      '/var/run/secrets/kubernetes.io/serviceaccount/token',
    );
    expect(otherFile.message).toContain("is not the pod's token file");
    expect(stsCalls()).toEqual([]);
  });
});

describe('Vertex AI access tokens', () => {
  const key = (pem = privateKey) =>
    JSON.stringify({
      type: 'service_account',
      client_email: CLIENT_EMAIL,
      private_key: pem.export({ type: 'pkcs8', format: 'pem' }).toString(),
      token_uri: `${sim.url}/token`,
    });

  it('service-account key: JWT bearer grant, the token reused until 5 minutes before expiry, then renewed', async () => {
    const c = clock();
    const auth = serviceAccountAuth({ method: 'gcp-service-account' }, key(), TIMEOUTS, { now: c.now });
    const first = await auth.token(new AbortController().signal);
    expect(first).toMatch(/^ya29\.sim-/);
    const grant = googleCalls()[0]!.body as Record<string, string>;
    expect(grant.grant_type).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const claims = JSON.parse(Buffer.from(grant.assertion!.split('.')[1]!, 'base64url').toString());
    expect(claims).toMatchObject({
      iss: CLIENT_EMAIL,
      aud: `${sim.url}/token`,
      scope: 'https://www.googleapis.com/auth/cloud-platform',
    });
    c.t += 54 * MIN;
    expect(await auth.token(new AbortController().signal)).toBe(first);
    c.t += 2 * MIN;
    expect(await auth.token(new AbortController().signal)).toBe(first);
    await auth.refreshing.settled();
    const second = await auth.token(new AbortController().signal);
    expect(second).not.toBe(first);
    expect(googleCalls()).toHaveLength(2);
    // Vertex accepts the renewed token.
    const target = makeTarget('vertex-ai', sim.url, 'gemini-2.5-flash', {
      apiKey: '',
      auth,
      options: { project: 'p', region: 'us-central1' },
    });
    await getAdapter('vertex-ai').call(target, simpleChat(), ctx());
    expect(sim.requests().at(-1)!.headers.authorization).toBe('<redacted>');
  });

  it('a key the token endpoint does not know (wrong signature) → 401 invalid_grant, not retryable', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const auth = serviceAccountAuth({ method: 'gcp-service-account' }, key(other), TIMEOUTS);
    const err = await failure(() => auth.token(new AbortController().signal));
    expect([err.status, err.retryable, err.providerCode]).toEqual([401, false, 'invalid_grant']);
    expect(err.message).toContain('Invalid JWT Signature');
  });

  it('the tokenEndpoint override is where the grant goes', async () => {
    const auth = serviceAccountAuth(
      { method: 'gcp-service-account', tokenEndpoint: `${sim.url}/token` },
      JSON.stringify({ ...JSON.parse(key()), token_uri: `${sim.url}/token` }),
      TIMEOUTS,
    );
    await auth.token(new AbortController().signal);
    expect(googleCalls().map((r) => r.path)).toEqual(['/token']);
  });

  it('workload identity: the metadata server, with Metadata-Flavor: Google; renewed ahead of expiry', async () => {
    const c = clock();
    const auth = workloadIdentityAuth(
      { method: 'gcp-workload-identity', metadataEndpoint: sim.url, serviceAccount: 'default' },
      TIMEOUTS,
      { now: c.now },
    );
    const first = await auth.token(new AbortController().signal);
    expect(googleCalls()[0]).toMatchObject({
      method: 'GET',
      path: '/computeMetadata/v1/instance/service-accounts/default/token',
      headers: { 'metadata-flavor': 'Google' },
    });
    c.t += 61 * MIN; // past expiry: the caller waits for the new token
    const second = await auth.token(new AbortController().signal);
    expect(second).not.toBe(first);
    expect(auth.refreshing.fetches).toBe(2);
  });
});
