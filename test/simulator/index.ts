/**
 * Provider simulator: one node:http server speaking the real wire formats of OpenAI, Azure OpenAI,
 * Anthropic and Gemini (streaming included), validating requests against each API's documented shape,
 * recording what it receives and injecting faults on demand.
 *
 * Base URLs: OpenAI `${url}/v1`; Azure `${url}` (+ /openai/deployments/{d}/...?api-version=...);
 * Anthropic `${url}` (+ /v1/messages); Gemini `${url}` (+ /v1beta/models/{m}:generateContent).
 *
 * Faults: addFault(rule) / POST /_sim/faults, or model-name tokens such as `fail-503`, `slow-2000`,
 * `cut-3`, `hang`, `malformed`, `reset` (see faults.ts). Tool calls: see toolcall.ts.
 * Deterministic content rules: see generate.ts.
 */
export { startSimulator } from './server.ts';
export type { FaultRule, ProviderName, RecordedRequest, Simulator, SimulatorOptions } from './types.ts';
