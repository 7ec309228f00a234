import { z } from 'zod';
import { REQUEST_TYPES } from '#contract';

/**
 * Shared building blocks of the Switchyard custom resources. These zod schemas are the single
 * source of truth: the CRD YAML in crds/ is generated from them (operator/src/crd), so every field
 * carries a description for `kubectl explain`, and cross-field rules are CEL expressions attached
 * through `x-kubernetes-validations` metadata and mirrored by zod refinements for embedded mode.
 */

export const GROUP = 'switchyard.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export type CelRule = { rule: string; message: string; fieldPath?: string; reason?: string };

/** Attach CEL rules to a schema node; the CRD generator copies them verbatim. */
export const cel = (...rules: CelRule[]) => ({ 'x-kubernetes-validations': rules });

/** A CEL string literal. JSON string escapes are valid CEL escapes, and single quotes need one. */
export const celString = (value: string): string =>
  `'${JSON.stringify(value).slice(1, -1).replace(/'/g, "\\'")}'`;

/** A CEL list of string literals, e.g. `['chat', 'vision']`, for rules built from a vocabulary. */
export const celList = (values: readonly string[]): string => `[${values.map(celString).join(', ')}]`;

/** "a, b or c": vocabularies spelled out in descriptions and messages. */
export const wordList = (values: readonly string[], last = 'or'): string =>
  values.length <= 1 ? values.join('') : `${values.slice(0, -1).join(', ')} ${last} ${values.at(-1)}`;

/** "a: meaning; b: meaning." from a record keyed by every value of a vocabulary. */
export const describeValues = (meanings: Record<string, string>): string =>
  `${Object.entries(meanings)
    .map(([value, meaning]) => `${value}: ${meaning}`)
    .join('; ')}.`;

export const requestType = z
  .enum(REQUEST_TYPES)
  .meta({ description: `Kind of AI request: ${wordList(REQUEST_TYPES)}.` });

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export const objectName = (what: string) =>
  z
    .string()
    .min(1)
    .max(253)
    .regex(DNS_SUBDOMAIN)
    .meta({ description: `Name of the ${what} in the same namespace.` });

export const localRef = (what: string) =>
  z.object({ name: objectName(what) }).meta({ description: `Reference to a ${what} in the same namespace.` });

/** A non-negative decimal amount of money in US dollars, as a string so no float rounding creeps in. */
export const DECIMAL = /^(0|[1-9][0-9]{0,11})(\.[0-9]{1,9})?$/;
export const usd = (description: string) =>
  z
    .string()
    .max(24)
    .regex(DECIMAL, 'must be a non-negative decimal string such as "12.50"')
    .meta({ description: `${description} Non-negative decimal string in US dollars, e.g. "2.50".` });

export const secretKeyRef = (purpose: string, defaultKey: string) =>
  z
    .object({
      name: z
        .string()
        .min(1)
        .max(253)
        .regex(DNS_SUBDOMAIN)
        .meta({ description: 'Name of a Secret in the same namespace.' }),
      key: z
        .string()
        .min(1)
        .max(253)
        .regex(/^[-._a-zA-Z0-9]+$/)
        .default(defaultKey)
        .meta({ description: `Key inside the Secret's data. Defaults to "${defaultKey}".` }),
    })
    .meta({ description: `Secret holding the ${purpose}.` });

export const rateLimit = z
  .object({
    requestsPerMinute: z
      .number()
      .int()
      .min(1)
      .max(10_000_000)
      .optional()
      .meta({ description: 'Maximum requests per minute. Unset means no request limit at this level.' }),
    tokensPerMinute: z
      .number()
      .int()
      .min(1)
      .max(10_000_000_000)
      .optional()
      .meta({ description: 'Maximum prompt plus completion tokens per minute. Unset means no token limit.' }),
  })
  .meta({ description: 'Rate limit; requests over it get HTTP 429 with a retry delay.' });

export const condition = z
  .object({
    type: z.string().min(1).max(316).meta({ description: 'Type of condition, e.g. Ready.' }),
    status: z
      .enum(['True', 'False', 'Unknown'])
      .meta({ description: 'Status of the condition: True, False or Unknown.' }),
    reason: z.string().min(1).max(1024).meta({
      description: 'Machine-readable CamelCase reason for the last transition, e.g. ProviderNotFound.',
    }),
    message: z.string().max(32768).meta({ description: 'Human-readable explanation of the condition.' }),
    lastTransitionTime: z
      .string()
      .meta({ description: 'When the condition last changed status (RFC 3339).', format: 'date-time' }),
    observedGeneration: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: 'metadata.generation the condition was computed from.' }),
  })
  .meta({ description: 'A standard Kubernetes status condition.' });
export type Condition = z.infer<typeof condition>;

export const conditions = z
  .array(condition)
  .max(16)
  .meta({
    description: 'Conditions of the object; Ready tells whether it is part of the published snapshot.',
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
  });

export const observedGeneration = z
  .number()
  .int()
  .min(0)
  .meta({ description: 'metadata.generation of the spec the status was computed from.' });

/** The part of ObjectMeta the compiler reads; other fields pass through untouched. */
export const objectMeta = z.looseObject({
  name: z.string().min(1).max(253).regex(DNS_SUBDOMAIN, 'must be a lowercase RFC 1123 subdomain'),
  namespace: z
    .string()
    .min(1)
    .max(63)
    .regex(DNS_LABEL, 'must be a lowercase RFC 1123 label')
    .default('default'),
  uid: z.string().optional(),
  generation: z.number().int().optional(),
  resourceVersion: z.string().optional(),
  creationTimestamp: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});
export type ObjectMeta = z.infer<typeof objectMeta>;

/** Describes how a kind is registered: names for the CRD and the columns `kubectl get` prints. */
export interface KindInfo {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  printerColumns: {
    name: string;
    type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
    jsonPath: string;
    description: string;
    priority?: number;
  }[];
  description: string;
}

export const readyColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
  description: 'Whether the object is valid and part of the published snapshot.',
} as const;
export const reasonColumn = {
  name: 'Reason',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
  description: 'Why the object is or is not Ready.',
  priority: 1,
} as const;
export const ageColumn = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description: 'Time since creation.',
} as const;
