/** Shortest webhook key accepted, in bytes (Standard Webhooks secrets are 24-64 random bytes). */
export const MIN_WEBHOOK_KEY_BYTES = 16;

const WHSEC = /^whsec_([A-Za-z0-9+/_-]+={0,2})$/;

/**
 * Webhook secrets are Standard Webhooks secrets, `whsec_<base64 key>`, so receivers can verify
 * deliveries with the `standardwebhooks` libraries as they are. Returns why a value is not one.
 */
export function webhookSecretProblem(value: string): string | undefined {
  const m = WHSEC.exec(value);
  if (!m) return 'the secret must look like whsec_<base64>';
  const bytes = Buffer.from(m[1] ?? '', 'base64').length;
  if (bytes < MIN_WEBHOOK_KEY_BYTES)
    return `the secret's key is ${bytes} bytes; at least ${MIN_WEBHOOK_KEY_BYTES} are required (whsec_ + base64 of 24-64 random bytes)`;
  return undefined;
}
