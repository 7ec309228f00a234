/**
 * Where a generated API key lives: the Secret the key step writes and the compiler reads. Both
 * sides import these names from here, so the compile pass never depends on the key step.
 */

/** Name of the Secret the operator generates for an ApiKey without secretRef. */
export const generatedKeySecretName = (apiKeyName: string): string => `${apiKeyName}-apikey`;
/** Secret keys that carry the pre-rotation key and the end of its grace period. */
export const PREVIOUS_KEY_FIELD = 'previousApiKey';
export const PREVIOUS_VALID_UNTIL_FIELD = 'previousValidUntil';
