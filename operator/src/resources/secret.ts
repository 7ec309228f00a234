import { z } from 'zod';
import { objectMeta } from './common.ts';

/** Core v1 Secret, as far as the compiler needs it. `stringData` is accepted as kubectl would. */
export const secret = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('Secret'),
  metadata: objectMeta,
  type: z.string().optional(),
  data: z.record(z.string(), z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64')).optional(),
  stringData: z.record(z.string(), z.string()).optional(),
});
export type Secret = z.infer<typeof secret>;

/** Decoded view of a Secret: kubectl merges stringData over data. */
export interface SecretData {
  namespace: string;
  name: string;
  data: Record<string, string>;
}

export function decodeSecret(s: Secret): SecretData {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(s.data ?? {})) data[k] = Buffer.from(v, 'base64').toString('utf8');
  Object.assign(data, s.stringData ?? {});
  return { namespace: s.metadata.namespace, name: s.metadata.name, data };
}
