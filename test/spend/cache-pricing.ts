/**
 * What the prompt-cache tests share: their stack, model prices under which every cost is a whole
 * number of µUSD, a request-log entry read back by the id the gateway answered with, and a Messages
 * request sent sync or streamed with the Anthropic SDK.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { API_KEY, apiKey, NO_AI_SCOPE_KEY, project, SIM_AWS_KEYS } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';

/** $ per million tokens, so µUSD per token. */
export const PRICES = { input: 10, cachedInput: 1, cacheWrite: 20, cacheWrite1h: 30, output: 40 };
export const CACHE_PRICING = {
  inputUsdPerMTok: String(PRICES.input),
  outputUsdPerMTok: String(PRICES.output),
  cachedInputUsdPerMTok: String(PRICES.cachedInput),
  cacheWriteUsdPerMTok: String(PRICES.cacheWrite),
  cacheWrite1hUsdPerMTok: String(PRICES.cacheWrite1h),
};

export interface LogEntry {
  request_log_id: string;
  usage: { prompt_tokens: number; completion_tokens: number } | null;
  cost_usd: string | null;
}

/** The request-log entry of a request (read with the console-only key, after a flush). */
export async function logged(gw: RunningGateway, id: string | null): Promise<LogEntry> {
  await gw.gateway.state.flush();
  const res = await fetch(`${gw.url}/v1/request-logs?limit=100`, {
    headers: { authorization: `Bearer ${NO_AI_SCOPE_KEY}` },
  });
  const entry = ((await res.json()) as { data: LogEntry[] }).data.find((e) => e.request_log_id === id);
  if (!entry) throw new Error(`no request-log entry ${id}`);
  return entry;
}

export const micros = (e: LogEntry): number => Math.round(Number(e.cost_usd) * 1_000_000);

/** A Messages request, sync or streamed: Claude's usage and the request-log id the gateway gave it. */
export async function sendMessages(
  client: Anthropic,
  params: Anthropic.MessageCreateParamsNonStreaming,
  streamed: boolean,
): Promise<{ usage: Anthropic.Usage; id: string | null }> {
  if (!streamed) {
    const { data, response } = await client.messages.create(params).withResponse();
    return { usage: data.usage, id: response.headers.get('x-service-request-log-id') };
  }
  const s = client.messages.stream(params);
  const id = (await s.withResponse()).response.headers.get('x-service-request-log-id');
  return { usage: (await s.finalMessage()).usage, id };
}

export interface Stack {
  redis: RunningRedis;
  sim: Simulator;
  gw: RunningGateway;
  close(): Promise<void>;
}

/**
 * Real Redis, the simulator (with the AWS keys Bedrock signs with) and a gateway serving the
 * project, its main key, a console-only key (for request logs) and `config` (providers, workflows).
 */
export async function startStack(config: (sim: Simulator) => object[]): Promise<Stack> {
  const redis = await startRedis();
  const sim = await startSimulator({ aws: SIM_AWS_KEYS });
  const gw = await startGateway(
    [
      project(),
      ...apiKey('main', API_KEY),
      ...apiKey('console-only', NO_AI_SCOPE_KEY, { scopes: ['console'] }),
      ...config(sim),
    ],
    { redisUrl: redis.url },
  );
  return {
    redis,
    sim,
    gw,
    async close() {
      await gw.close();
      await sim.close();
      await redis.stop();
    },
  };
}
