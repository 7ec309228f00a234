/**
 * Failures to obtain provider credentials, as upstream failures: the gateway could not authenticate
 * to the provider. A refusal by the credential endpoint (any 4xx but 429) reads like a provider's
 * 401, a wrong key: not retryable, since every retry would be refused alike. Its unavailability
 * (429, 5xx, timeouts, connection errors) is retryable like any upstream's.
 */
import { UpstreamError } from '../../upstream/errors.ts';

export function credentialRefused(
  what: string,
  status: number,
  message: string,
  code?: string,
): UpstreamError {
  const reported = status === 429 || status >= 500 ? status : 401;
  const text = `${what} answered ${status}: ${message}`;
  return new UpstreamError(`credentials: ${text}`, {
    code: 'UPSTREAM_STATUS',
    status: reported,
    providerMessage: text,
    providerCode: code,
  });
}

export function credentialInvalid(what: string, message: string): UpstreamError {
  const text = `${what}: ${message}`;
  return new UpstreamError(`credentials: ${text}`, {
    code: 'UPSTREAM_STATUS',
    status: 401,
    providerMessage: text,
  });
}

/** A transport failure of the exchange keeps its code (timeout, connect), with what was being fetched. */
export function credentialTransport(what: string, err: unknown): UpstreamError {
  if (err instanceof UpstreamError)
    return new UpstreamError(`credentials: ${what}: ${err.message}`, {
      code: err.code,
      status: err.status,
      providerMessage: `${what}: ${err.providerMessage}`,
      cause: err,
    });
  const message = err instanceof Error ? err.message : String(err);
  return credentialInvalid(what, message);
}
