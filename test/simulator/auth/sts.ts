/**
 * A fake AWS STS that answers AssumeRoleWithWebIdentity (POST /sts, form body, unsigned) the way
 * the real one does: XML, a `<Credentials>` block on success, an `<ErrorResponse>` otherwise. It
 * accepts the web identity token the simulator was given and issues temporary keys that Bedrock's
 * signature check then accepts until they expire.
 */
import { randomUUID } from 'node:crypto';
import type { ErrorReply, Exchange, ProviderApi } from '../exchange.ts';
import { sendBody } from '../respond.ts';

const NS = 'https://sts.amazonaws.com/doc/2011-06-15/';
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/;

export function stsError(status: number, code: string, message: string): ErrorReply {
  const type = status >= 500 ? 'Receiver' : 'Sender';
  return {
    status,
    body: null,
    text: {
      contentType: 'text/xml',
      content: `<ErrorResponse xmlns="${NS}">\n  <Error>\n    <Type>${type}</Type>\n    <Code>${code}</Code>\n    <Message>${message}</Message>\n  </Error>\n  <RequestId>${randomUUID()}</RequestId>\n</ErrorResponse>\n`,
    },
  };
}

const STATUS_CODES: Record<number, string> = {
  400: 'InvalidParameterValue',
  403: 'AccessDenied',
  429: 'Throttling',
  500: 'InternalFailure',
  503: 'ServiceUnavailable',
};

async function assumeRole(ex: Exchange): Promise<void> {
  const form = ex.body as Record<string, string>;
  const reply = (r: ErrorReply) => sendBody(ex, r.status, 'text/xml', r.text?.content ?? '');
  if (form.Action !== 'AssumeRoleWithWebIdentity')
    return reply(
      stsError(400, 'InvalidAction', `Could not find operation ${form.Action} for version ${form.Version}`),
    );
  if (form.Version !== '2011-06-15') return reply(stsError(400, 'InvalidParameterValue', 'Invalid Version'));
  if (!form.RoleArn || !ROLE_ARN.test(form.RoleArn))
    return reply(
      stsError(
        400,
        'ValidationError',
        `1 validation error detected: Value '${form.RoleArn}' at 'roleArn' failed to satisfy constraint`,
      ),
    );
  if (!form.RoleSessionName) return reply(stsError(400, 'ValidationError', 'roleSessionName is required'));
  const expected = ex.auth.opts.webIdentity;
  if (!expected || form.WebIdentityToken !== expected.token)
    return reply(
      stsError(400, 'InvalidIdentityToken', "Couldn't retrieve verification key from your identity provider"),
    );
  const asked = Number(form.DurationSeconds ?? 3600);
  const seconds = Math.min(Number.isFinite(asked) ? asked : 3600, expected.durationSeconds ?? 3600);
  const key = ex.auth.issueAwsKeys(seconds);
  const xml = `<AssumeRoleWithWebIdentityResponse xmlns="${NS}">
  <AssumeRoleWithWebIdentityResult>
    <SubjectFromWebIdentityToken>system:serviceaccount:switchyard:gateway</SubjectFromWebIdentityToken>
    <Audience>sts.amazonaws.com</Audience>
    <AssumedRoleUser>
      <Arn>${form.RoleArn.replace(':role/', ':assumed-role/').replace('arn:aws:iam', 'arn:aws:sts')}/${form.RoleSessionName}</Arn>
      <AssumedRoleId>AROASIM:${form.RoleSessionName}</AssumedRoleId>
    </AssumedRoleUser>
    <Credentials>
      <SessionToken>${key.sessionToken}</SessionToken>
      <SecretAccessKey>${key.secretAccessKey}</SecretAccessKey>
      <Expiration>${new Date(key.expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z')}</Expiration>
      <AccessKeyId>${key.accessKeyId}</AccessKeyId>
    </Credentials>
    <Provider>arn:aws:iam::123456789012:oidc-provider/oidc.eks.sim</Provider>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata>
    <RequestId>${randomUUID()}</RequestId>
  </ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>
`;
  return sendBody(ex, 200, 'text/xml', xml);
}

export const awsStsApi: ProviderApi = {
  name: 'aws-sts',
  route(method, url) {
    if (method !== 'POST' || (url.pathname !== '/sts' && url.pathname !== '/sts/')) return undefined;
    return { body: 'form', handle: assumeRole };
  },
  precheck: () => undefined,
  error: (status, message) =>
    stsError(status, STATUS_CODES[status] ?? 'InternalFailure', message ?? `HTTP ${status}`),
  invalidJson: (detail) => stsError(400, 'MalformedInput', detail),
  invalidRequest: (issues) => stsError(400, 'ValidationError', issues[0]?.message ?? 'invalid'),
  notFound: () => stsError(404, 'UnknownOperation', 'Not Found'),
  headers: () => ({ 'x-amzn-requestid': randomUUID() }),
};
