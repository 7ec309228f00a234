/**
 * Which OpenAI-compatible server a base URL points at, by its host (or Ollama's port). Imports
 * nothing: the adapter (./request.ts) picks its dialect by it and tracing names the provider by it.
 */

export type CompatServer = 'groq' | 'mistral' | 'together' | 'deepseek' | 'xai' | 'ollama' | 'generic';

const HOSTS: [RegExp, CompatServer][] = [
  [/(^|\.)groq\.com$/, 'groq'],
  [/(^|\.)mistral\.ai$/, 'mistral'],
  [/(^|\.)together\.(xyz|ai)$/, 'together'],
  [/(^|\.)deepseek\.com$/, 'deepseek'],
  [/(^|\.)x\.ai$/, 'xai'],
  [/(^|\.)ollama(\.|$)/, 'ollama'],
];

/** The server of `baseURL` (parsed on every call: callers keep what they need of it). */
export function compatServerOf(baseURL: string): CompatServer {
  try {
    const u = new URL(baseURL);
    const host = u.hostname.toLowerCase();
    const hit = HOSTS.find(([re]) => re.test(host));
    if (hit) return hit[1];
    if (u.port === '11434') return 'ollama';
  } catch {
    // invalid URL: the request itself will fail with a connect error
  }
  return 'generic';
}
