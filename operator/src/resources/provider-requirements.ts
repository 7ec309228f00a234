import { PROVIDER_TYPES, type ProviderType } from '#contract';
import { cel, celList, wordList } from './common.ts';
import { CREDENTIALS_OPTIONAL, ONE_CREDENTIAL } from './provider-credentials.ts';

/**
 * What each provider type requires of a Provider's spec (a base URL unless its endpoint is well
 * known, credentials of its kind, a region and a project on the clouds), stated twice: as CEL rules
 * for the API server and as the zod check the operator runs, with the same messages.
 */

/**
 * Types whose public endpoint is well known; the others must name their baseURL. Regional clouds
 * derive theirs from `region`.
 */
export const DEFAULT_BASE_URLS: Partial<Record<ProviderType, (region: string) => string>> = {
  openai: () => 'https://api.openai.com/v1',
  anthropic: () => 'https://api.anthropic.com',
  gemini: () => 'https://generativelanguage.googleapis.com',
  cohere: () => 'https://api.cohere.com',
  bedrock: (region) => `https://bedrock-runtime.${region}.amazonaws.com`,
  'vertex-ai': (region) =>
    region === 'global' ? 'https://aiplatform.googleapis.com' : `https://${region}-aiplatform.googleapis.com`,
};
export const WITH_DEFAULT_BASE_URL = PROVIDER_TYPES.filter((t) => DEFAULT_BASE_URLS[t] !== undefined);
export const WITHOUT_DEFAULT_BASE_URL = PROVIDER_TYPES.filter((t) => DEFAULT_BASE_URLS[t] === undefined);

/** Types on a regional cloud: `region` is required. */
export const REGIONAL: readonly ProviderType[] = ['bedrock', 'vertex-ai'];

const BASE_URL_REQUIRED = `baseURL is required for ${wordList(WITHOUT_DEFAULT_BASE_URL, 'and')} providers`;
const CREDENTIALS_REQUIRED = 'credentials are required for this provider type';
const BEDROCK_CREDENTIALS = 'bedrock credentials are awsAccessKeys or webIdentity';
const VERTEX_CREDENTIALS = 'vertex-ai credentials are secretRef (a service-account key) or workloadIdentity';
const KEY_CREDENTIALS = 'this provider type takes an API key: credentials.secretRef';
const REGION_REQUIRED = `region is required for ${wordList(REGIONAL, 'and')} providers`;
const PROJECT_REQUIRED = 'project is required for vertex-ai providers';
const FIRST_BYTE_WITHIN_TOTAL = 'timeouts.firstByteMs must not exceed timeouts.totalMs';

/** The requirements as the API server checks them. */
export const providerSpecRules = cel(
  {
    rule: `self.type in ${celList(WITH_DEFAULT_BASE_URL)} || has(self.baseURL)`,
    message: BASE_URL_REQUIRED,
    fieldPath: '.baseURL',
  },
  {
    rule: `self.type in ${celList(CREDENTIALS_OPTIONAL)} || has(self.credentials)`,
    message: CREDENTIALS_REQUIRED,
    fieldPath: '.credentials',
  },
  {
    rule: "self.type != 'bedrock' || !has(self.credentials) || has(self.credentials.awsAccessKeys) || has(self.credentials.webIdentity)",
    message: BEDROCK_CREDENTIALS,
    fieldPath: '.credentials',
  },
  {
    rule: "self.type != 'vertex-ai' || !has(self.credentials) || has(self.credentials.secretRef) || has(self.credentials.workloadIdentity)",
    message: VERTEX_CREDENTIALS,
    fieldPath: '.credentials',
  },
  {
    rule: "self.type in ['bedrock', 'vertex-ai'] || !has(self.credentials) || has(self.credentials.secretRef)",
    message: KEY_CREDENTIALS,
    fieldPath: '.credentials',
  },
  {
    rule: `!(self.type in ${celList(REGIONAL)}) || has(self.region)`,
    message: REGION_REQUIRED,
    fieldPath: '.region',
  },
  {
    rule: "self.type != 'vertex-ai' || has(self.project)",
    message: PROJECT_REQUIRED,
    fieldPath: '.project',
  },
  {
    rule: 'self.timeouts.firstByteMs <= self.timeouts.totalMs',
    message: FIRST_BYTE_WITHIN_TOTAL,
    fieldPath: '.timeouts.firstByteMs',
  },
);

/** The fields of a Provider spec the requirements read. */
export interface RequiredFields {
  type: ProviderType;
  baseURL?: string | undefined;
  region?: string | undefined;
  project?: string | undefined;
  credentials?:
    | { secretRef?: unknown; awsAccessKeys?: unknown; webIdentity?: unknown; workloadIdentity?: unknown }
    | undefined;
  timeouts: { firstByteMs: number; totalMs: number };
}

/** The requirements as the operator checks them: one issue per requirement the spec misses. */
export function providerSpecIssues(spec: RequiredFields): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  if (!DEFAULT_BASE_URLS[spec.type] && !spec.baseURL)
    issues.push({ path: ['baseURL'], message: BASE_URL_REQUIRED });
  if (!CREDENTIALS_OPTIONAL.includes(spec.type) && !spec.credentials)
    issues.push({ path: ['credentials'], message: CREDENTIALS_REQUIRED });
  const c = spec.credentials;
  if (c) {
    const set = [c.secretRef, c.awsAccessKeys, c.webIdentity, c.workloadIdentity].filter(Boolean).length;
    const problem =
      set !== 1
        ? ONE_CREDENTIAL
        : spec.type === 'bedrock'
          ? c.awsAccessKeys || c.webIdentity
            ? undefined
            : BEDROCK_CREDENTIALS
          : spec.type === 'vertex-ai'
            ? c.secretRef || c.workloadIdentity
              ? undefined
              : VERTEX_CREDENTIALS
            : c.secretRef
              ? undefined
              : KEY_CREDENTIALS;
    if (problem) issues.push({ path: ['credentials'], message: problem });
  }
  if (REGIONAL.includes(spec.type) && !spec.region)
    issues.push({ path: ['region'], message: REGION_REQUIRED });
  if (spec.type === 'vertex-ai' && !spec.project)
    issues.push({ path: ['project'], message: PROJECT_REQUIRED });
  if (spec.timeouts.firstByteMs > spec.timeouts.totalMs)
    issues.push({ path: ['timeouts', 'firstByteMs'], message: FIRST_BYTE_WITHIN_TOTAL });
  return issues;
}
