import { z } from 'zod';
import { PROVIDER_TYPES, type ProviderType, REQUEST_TYPES } from '#contract';
import {
  ageColumn,
  cel,
  celList,
  conditions,
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

/** Types whose public endpoint is well known; the others must name their baseURL. */
export const DEFAULT_BASE_URLS: Partial<Record<ProviderType, string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  gemini: 'https://generativelanguage.googleapis.com',
};
const WITH_DEFAULT_BASE_URL = PROVIDER_TYPES.filter((t) => DEFAULT_BASE_URLS[t] !== undefined);
const WITHOUT_DEFAULT_BASE_URL = PROVIDER_TYPES.filter((t) => DEFAULT_BASE_URLS[t] === undefined);

/** Types that may run without credentials (self-hosted servers without auth). */
export const CREDENTIALS_OPTIONAL: readonly ProviderType[] = ['openai-compatible'];

const BASE_URL_REQUIRED = `baseURL is required for ${wordList(WITHOUT_DEFAULT_BASE_URL, 'and')} providers`;
const CREDENTIALS_REQUIRED = 'credentials.secretRef is required for this provider type';

const pricing = z
  .object({
    inputUsdPerMTok: usd('Price of one million input (prompt) tokens.').optional(),
    outputUsdPerMTok: usd('Price of one million output (completion) tokens.').optional(),
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
  })
  .meta({ description: 'A model offered by the provider.' });

export const providerSpec = z
  .object({
    type: z
      .enum(PROVIDER_TYPES)
      .meta({ description: `Wire protocol of the provider: ${PROVIDER_TYPES.join(', ')}.` }),
    baseURL: z
      .string()
      .max(2048)
      .regex(/^https?:\/\/[^\s]+$/, 'must be an http(s) URL')
      .optional()
      .meta({
        description: `Base URL of the API. Defaults per type (${WITH_DEFAULT_BASE_URL.join(', ')}); required for ${wordList(WITHOUT_DEFAULT_BASE_URL, 'and')} (azure-openai: https://<resource>.openai.azure.com).`,
      }),
    apiVersion: z
      .string()
      .max(64)
      .optional()
      .meta({ description: 'API version query parameter for azure-openai, e.g. 2024-10-21.' }),
    credentials: z
      .object({ secretRef: secretKeyRef('provider API key', 'apiKey') })
      .optional()
      .meta({
        description: `Where the provider API key is. Optional only for ${wordList(CREDENTIALS_OPTIONAL)} servers without auth.`,
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
