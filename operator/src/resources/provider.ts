import { z } from 'zod';
import { PROVIDER_TYPES, type ProviderType, REQUEST_TYPES } from '#contract';
import {
  ageColumn,
  cel,
  celList,
  conditions,
  DNS_SUBDOMAIN,
  type KindInfo,
  objectMeta,
  observedGeneration,
  readyColumn,
  reasonColumn,
  requestType,
  secretKeyRef,
  usd,
  wordList,
} from './common.ts';

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
const WITH_DEFAULT_BASE_URL = PROVIDER_TYPES.filter((t) => DEFAULT_BASE_URLS[t] !== undefined);
const WITHOUT_DEFAULT_BASE_URL = PROVIDER_TYPES.filter((t) => DEFAULT_BASE_URLS[t] === undefined);

/** Types that may run without credentials (self-hosted servers without auth). */
export const CREDENTIALS_OPTIONAL: readonly ProviderType[] = ['openai-compatible'];

/** Types on a regional cloud: `region` is required. */
export const REGIONAL: readonly ProviderType[] = ['bedrock', 'vertex-ai'];

/** The cloud endpoints credentials are exchanged at, unless the Provider's `endpoints` override them. */
export const DEFAULT_ENDPOINTS = {
  sts: (region: string) => `https://sts.${region}.amazonaws.com`,
  token: 'https://oauth2.googleapis.com/token',
  metadata: 'http://metadata.google.internal',
} as const;

/** Where IRSA (EKS) mounts the pod's web identity token when AWS_WEB_IDENTITY_TOKEN_FILE is unset. */
export const DEFAULT_WEB_IDENTITY_TOKEN_FILE = '/var/run/secrets/eks.amazonaws.com/serviceaccount/token';

const BASE_URL_REQUIRED = `baseURL is required for ${wordList(WITHOUT_DEFAULT_BASE_URL, 'and')} providers`;
const CREDENTIALS_REQUIRED = 'credentials are required for this provider type';
const ONE_CREDENTIAL =
  'credentials must name exactly one of secretRef, awsAccessKeys, webIdentity, workloadIdentity';
const BEDROCK_CREDENTIALS = 'bedrock credentials are awsAccessKeys or webIdentity';
const VERTEX_CREDENTIALS = 'vertex-ai credentials are secretRef (a service-account key) or workloadIdentity';
const KEY_CREDENTIALS = 'this provider type takes an API key: credentials.secretRef';
const REGION_REQUIRED = `region is required for ${wordList(REGIONAL, 'and')} providers`;
const PROJECT_REQUIRED = 'project is required for vertex-ai providers';

const httpUrl = (description: string) =>
  z
    .string()
    .max(2048)
    .regex(/^https?:\/\/[^\s]+$/, 'must be an http(s) URL')
    .meta({ description });

const secretKeyName = (defaultKey: string, what: string) =>
  z
    .string()
    .min(1)
    .max(253)
    .regex(/^[-._a-zA-Z0-9]+$/)
    .default(defaultKey)
    .meta({ description: `Key of the ${what} inside the Secret. Defaults to "${defaultKey}".` });

const credentials = z
  .object({
    secretRef: secretKeyRef(
      'provider API key (vertex-ai: the service-account key file, JSON)',
      'apiKey',
    ).optional(),
    awsAccessKeys: z
      .object({
        name: z
          .string()
          .min(1)
          .max(253)
          .regex(DNS_SUBDOMAIN)
          .meta({ description: 'Name of a Secret in the same namespace.' }),
        accessKeyIdKey: secretKeyName('accessKeyId', 'access key id'),
        secretAccessKeyKey: secretKeyName('secretAccessKey', 'secret access key'),
        sessionTokenKey: secretKeyName('sessionToken', 'session token (used when the Secret has it)'),
      })
      .optional()
      .meta({
        description: 'bedrock: a Secret holding an AWS access key pair and, optionally, a session token.',
      }),
    webIdentity: z
      .object({
        roleArn: z
          .string()
          .max(2048)
          .regex(/^arn:[^:\s]+:iam::\d{12}:role\/\S+$/, 'must be an IAM role ARN')
          .optional()
          .meta({
            description: "IAM role to assume. Defaults to the pod's AWS_ROLE_ARN (set by EKS for IRSA).",
          }),
        tokenFile: z
          .string()
          .max(4096)
          .regex(/^\//, 'must be an absolute path')
          .optional()
          .meta({
            description: `Projected service-account token file. Defaults to the pod's AWS_WEB_IDENTITY_TOKEN_FILE, else ${DEFAULT_WEB_IDENTITY_TOKEN_FILE}; another file is read only when the gateway runs with SWITCHYARD_CREDENTIAL_ENDPOINT_OVERRIDES=true.`,
          }),
        sessionName: z
          .string()
          .min(2)
          .max(64)
          .regex(/^[\w+=,.@-]+$/)
          .default('switchyard')
          .meta({ description: 'Role session name recorded in CloudTrail. Defaults to "switchyard".' }),
      })
      .optional()
      .meta({
        description:
          "bedrock: the pod's web identity (EKS IRSA), exchanged for temporary keys with STS AssumeRoleWithWebIdentity and renewed before they expire.",
      }),
    workloadIdentity: z
      .object({
        serviceAccount: z
          .string()
          .min(1)
          .max(253)
          .regex(/^[-.@a-zA-Z0-9]+$/)
          .default('default')
          .meta({
            description: 'Service account whose token the metadata server issues. Defaults to "default".',
          }),
      })
      .optional()
      .meta({
        description:
          "vertex-ai: the pod's workload identity (GKE), access tokens from the metadata server, renewed before they expire.",
      }),
  })
  .meta({
    description: `How the gateway authenticates to the provider; exactly one of the fields. Optional only for ${wordList(CREDENTIALS_OPTIONAL)} servers without auth.`,
    ...cel({
      rule: '[has(self.secretRef), has(self.awsAccessKeys), has(self.webIdentity), has(self.workloadIdentity)].exists_one(x, x)',
      message: ONE_CREDENTIAL,
    }),
  });
export type ProviderCredentials = z.infer<typeof credentials>;

const pricing = z
  .object({
    inputUsdPerMTok: usd('Price of one million input (prompt) tokens.').optional(),
    outputUsdPerMTok: usd('Price of one million output (completion) tokens.').optional(),
    cachedInputUsdPerMTok: usd(
      "Price of one million input tokens read from the provider's prompt cache (cache hits). Unset: inputUsdPerMTok.",
    ).optional(),
    cacheWriteUsdPerMTok: usd(
      "Price of one million input tokens written to the provider's prompt cache (Claude's five-minute cache writes). Unset: inputUsdPerMTok.",
    ).optional(),
    cacheWrite1hUsdPerMTok: usd(
      'Price of one million input tokens written to the prompt cache for one hour (Claude). Unset: cacheWriteUsdPerMTok.',
    ).optional(),
    usdPerImage: usd('Price of one generated image.').optional(),
    usdPerAudioSecond: usd('Price of one second of audio.').optional(),
  })
  .meta({ description: 'Prices used for spend accounting and spend caps. Unset prices count as unknown.' });

export const providerModel = z
  .object({
    name: z
      .string()
      .min(1)
      .max(200)
      .meta({ description: 'Model name as the provider knows it (deployment name on Azure).' }),
    requestTypes: z.array(requestType).min(1).max(REQUEST_TYPES.length).default(['chat']).meta({
      description: 'Request types this model serves. Default [chat].',
      'x-kubernetes-list-type': 'set',
    }),
    pricing: pricing.optional(),
    maxOutputTokens: z.number().int().min(1).max(10_000_000).optional().meta({
      description:
        'Most tokens one answer of this model may have. Spend caps reserve this much output for requests without max_tokens (4096 when unset).',
    }),
    streaming: z.boolean().optional().meta({
      description:
        "false for a model that cannot stream: a streamed request to it is answered with its whole answer as a single chunk. Unset: the provider's streaming.",
    }),
  })
  .meta({ description: 'A model offered by the provider.' });

export const providerSpec = z
  .object({
    type: z
      .enum(PROVIDER_TYPES)
      .meta({ description: `Wire protocol of the provider: ${PROVIDER_TYPES.join(', ')}.` }),
    baseURL: httpUrl(
      `Base URL of the API. Defaults per type (${WITH_DEFAULT_BASE_URL.join(', ')}; bedrock: https://bedrock-runtime.<region>.amazonaws.com, vertex-ai: https://<region>-aiplatform.googleapis.com); required for ${wordList(WITHOUT_DEFAULT_BASE_URL, 'and')} (azure-openai: https://<resource>.openai.azure.com).`,
    ).optional(),
    apiVersion: z
      .string()
      .max(64)
      .optional()
      .meta({ description: 'API version query parameter for azure-openai, e.g. 2024-10-21.' }),
    region: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[a-z0-9-]+$/)
      .optional()
      .meta({
        description:
          'bedrock: the AWS region (us-east-1); vertex-ai: the Google Cloud location (us-central1, global).',
      }),
    project: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z][-a-z0-9.:]*[a-z0-9]$/)
      .optional()
      .meta({ description: 'vertex-ai: the Google Cloud project id.' }),
    credentials: credentials.optional(),
    endpoints: z
      .object({
        sts: httpUrl(
          'STS endpoint for webIdentity. Defaults to https://sts.<region>.amazonaws.com; a host other than AWS STS is used only when the gateway runs with SWITCHYARD_CREDENTIAL_ENDPOINT_OVERRIDES=true.',
        ).optional(),
        token: httpUrl(
          "OAuth 2.0 token endpoint for a service-account key. Defaults to the key's token_uri (https://oauth2.googleapis.com/token).",
        ).optional(),
        metadata: httpUrl(
          'Metadata server for workloadIdentity. Defaults to http://metadata.google.internal.',
        ).optional(),
      })
      .optional()
      .meta({
        description:
          'Where credentials are exchanged, when not at the cloud defaults (a private endpoint, a test double).',
      }),
    streaming: z.boolean().default(true).meta({
      description:
        'Whether the provider streams; when false, streamed requests are answered as one replayed SSE.',
    }),
    timeouts: z
      .object({
        connectMs: z
          .number()
          .int()
          .min(1)
          .max(600_000)
          .default(5_000)
          .meta({ description: 'TCP+TLS connect timeout in ms.' }),
        firstByteMs: z
          .number()
          .int()
          .min(1)
          .max(3_600_000)
          .default(60_000)
          .meta({ description: 'Time to the response headers in ms.' }),
        totalMs: z
          .number()
          .int()
          .min(1)
          .max(3_600_000)
          .default(300_000)
          .meta({ description: 'Deadline of the whole upstream call in ms, body included.' }),
      })
      .default({ connectMs: 5_000, firstByteMs: 60_000, totalMs: 300_000 })
      .meta({ description: 'Upstream timeouts; a timeout is retryable and moves to the next backup.' }),
    models: z
      .array(providerModel)
      .min(1)
      .max(500)
      .meta({
        description: 'Models this provider offers, with the request types they support and their pricing.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
      }),
  })
  .meta({
    description: 'An upstream AI provider account: protocol, endpoint, credentials, timeouts and models.',
    ...cel(
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
        message: 'timeouts.firstByteMs must not exceed timeouts.totalMs',
        fieldPath: '.timeouts.firstByteMs',
      },
    ),
  })
  .superRefine((spec, ctx) => {
    if (!DEFAULT_BASE_URLS[spec.type] && !spec.baseURL)
      ctx.addIssue({
        code: 'custom',
        path: ['baseURL'],
        message: BASE_URL_REQUIRED,
      });
    if (!CREDENTIALS_OPTIONAL.includes(spec.type) && !spec.credentials)
      ctx.addIssue({
        code: 'custom',
        path: ['credentials'],
        message: CREDENTIALS_REQUIRED,
      });
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
      if (problem) ctx.addIssue({ code: 'custom', path: ['credentials'], message: problem });
    }
    if (REGIONAL.includes(spec.type) && !spec.region)
      ctx.addIssue({ code: 'custom', path: ['region'], message: REGION_REQUIRED });
    if (spec.type === 'vertex-ai' && !spec.project)
      ctx.addIssue({ code: 'custom', path: ['project'], message: PROJECT_REQUIRED });
    if (spec.timeouts.firstByteMs > spec.timeouts.totalMs)
      ctx.addIssue({
        code: 'custom',
        path: ['timeouts', 'firstByteMs'],
        message: 'timeouts.firstByteMs must not exceed timeouts.totalMs',
      });
  });

export const providerStatus = z
  .object({
    models: z.number().int().min(0).optional().meta({ description: 'Number of models offered.' }),
    observedGeneration: observedGeneration.optional(),
    conditions: conditions.optional(),
  })
  .meta({ description: 'Observed state of the provider.' });

export const provider = z.object({
  apiVersion: z.literal('switchyard.dev/v1alpha1'),
  kind: z.literal('Provider'),
  metadata: objectMeta,
  spec: providerSpec,
  status: providerStatus.optional(),
});
export type Provider = z.infer<typeof provider>;
export type { ProviderType };

export const providerInfo: KindInfo = {
  kind: 'Provider',
  plural: 'providers',
  singular: 'provider',
  shortNames: ['syprov'],
  categories: ['switchyard'],
  description: 'An upstream AI provider account used by workflows in the same namespace.',
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.spec.type', description: 'Provider protocol.' },
    { name: 'Models', type: 'integer', jsonPath: '.status.models', description: 'Models offered.' },
    {
      name: 'Streaming',
      type: 'boolean',
      jsonPath: '.spec.streaming',
      description: 'Whether it streams.',
      priority: 1,
    },
    {
      name: 'Base URL',
      type: 'string',
      jsonPath: '.spec.baseURL',
      description: 'API base URL.',
      priority: 1,
    },
    readyColumn,
    reasonColumn,
    ageColumn,
  ],
};
