/**
 * CLI for benchmarks and manual runs:
 *   node test/simulator/main.ts --port 9999 --delay-ms 0 --stream-chunks 64 --chunk-interval-ms 20 \
 *     [--no-validate] [--host 127.0.0.1] [--api-key KEY]
 * Prints the base URL and runs until SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { startSimulator } from './server.ts';
import type { SimulatorOptions } from './types.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '9999' },
    host: { type: 'string' },
    'api-key': { type: 'string' },
    'delay-ms': { type: 'string' },
    'stream-chunks': { type: 'string' },
    'chunk-interval-ms': { type: 'string' },
    'no-validate': { type: 'boolean', default: false },
  },
});

function num(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number, got ${raw}`);
  return n;
}

const options: SimulatorOptions = { validate: !values['no-validate'] };
const port = num('port', values.port);
if (port !== undefined) options.port = port;
if (values.host) options.host = values.host;
if (values['api-key']) options.apiKey = values['api-key'];
const delayMs = num('delay-ms', values['delay-ms']);
if (delayMs !== undefined) options.delayMs = delayMs;
const streamChunks = num('stream-chunks', values['stream-chunks']);
if (streamChunks !== undefined) options.streamChunks = streamChunks;
const chunkIntervalMs = num('chunk-interval-ms', values['chunk-interval-ms']);
if (chunkIntervalMs !== undefined) options.chunkIntervalMs = chunkIntervalMs;

const sim = await startSimulator(options);
process.stdout.write(`provider simulator listening on ${sim.url}\n`);

const stop = () => {
  sim.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
