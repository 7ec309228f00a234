import { z } from 'zod';
import { PROVIDER_TYPES, type ProviderType, REQUEST_TYPES } from '#contract';
import {
  ageColumn,
  conditions,
  type KindInfo,
  objectMeta,
  observedGeneration,
  readyColumn,
  reasonColumn,
  requestType,
  usd,
  wordList,
} from './common.ts';
import { credentials } from './provider-credentials.ts';
import {
  providerSpecIssues,
  providerSpecRules,
  WITH_DEFAULT_BASE_URL,
  WITHOUT_DEFAULT_BASE_URL,
} from './provider-requirements.ts';

const httpUrl = (description: string) =>
  z
    .string()
    .max(2048)
    .regex(/^https?:\/\/[^\s]+$/, 'must be an http(s) URL')
    .meta({ description });

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
    ...providerSpecRules,
  })
  .superRefine((spec, ctx) => {
    for (const issue of providerSpecIssues(spec)) ctx.addIssue({ code: 'custom', ...issue });
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
