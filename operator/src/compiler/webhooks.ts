/** Shortest webhook key accepted, in bytes (Standard Webhooks secrets are 24-64 random bytes). */
export const MIN_WEBHOOK_KEY_BYTES = 16;

const WHSEC = /^whsec_([A-Za-z0-9+/_-]+={0,2})$/;

/**
 * Webhook secrets are Standard Webhooks secrets, `whsec_<base64 key>`, so receivers can verify
 * deliveries with the `standardwebhooks` libraries as they are. During a rotation the Secret holds
 * two, separated by white space (the new one first): deliveries then carry a signature for each.
 * Returns why a value is not acceptable.
 */
export function webhookSecretProblem(value: string): string | undefined {
  const parts = value.split(/\s+/).filter((p) => p.length > 0);
  if (parts.length > 2) return 'at most two secrets (new and old, during a rotation)';
  for (const part of parts) {
    const problem = oneSecretProblem(part);
    if (problem) return problem;
  }
  return undefined;
}

function oneSecretProblem(value: string): string | undefined {
  const m = WHSEC.exec(value);
  if (!m) return 'the secret must look like whsec_<base64>';
  const bytes = Buffer.from(m[1] ?? '', 'base64').length;
  if (bytes < MIN_WEBHOOK_KEY_BYTES)
    return `the secret's key is ${bytes} bytes; at least ${MIN_WEBHOOK_KEY_BYTES} are required (whsec_ + base64 of 24-64 random bytes)`;
  return undefined;
}
