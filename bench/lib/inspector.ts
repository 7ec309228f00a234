import { z } from 'zod';

/**
 * A CPU profile of a running process over its inspector (`--inspect=127.0.0.1:PORT`), started and
 * stopped around a piece of work: unlike `--cpu-prof`, which records from the process's first line,
 * it leaves out start-up and whatever load came before (a pod's first seconds of traffic, while V8 is
 * still optimizing).
 */

const targets = z.array(z.object({ webSocketDebuggerUrl: z.string() }));
const reply = z.object({
  id: z.number(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ message: z.string() }).optional(),
});
// Loose: the profile is written out as V8 gave it, every field kept.
const stopped = z.object({
  profile: z.looseObject({
    nodes: z.array(z.unknown()),
    samples: z.array(z.number()),
    timeDeltas: z.array(z.number()),
    startTime: z.number(),
    endTime: z.number(),
  }),
});

async function session(port: number) {
  const res = await fetch(`http://127.0.0.1:${port}/json/list`);
  const url = targets.parse(await res.json())[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on port ${port}`);
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve(), { once: true });
    ws.addEventListener('error', () => reject(new Error(`inspector ${url}: connection failed`)), {
      once: true,
    });
  });
  const waiting = new Map<
    number,
    { method: string; resolve: (r: Record<string, unknown>) => void; reject: (e: Error) => void }
  >();
  ws.addEventListener('message', (ev) => {
    const parsed = reply.safeParse(JSON.parse(String(ev.data)));
    // Events (no id) and anything else that is not an answer are not ours to wait for.
    if (!parsed.success) return;
    const w = waiting.get(parsed.data.id);
    if (!w) return;
    waiting.delete(parsed.data.id);
    if (parsed.data.error) w.reject(new Error(`${w.method}: ${parsed.data.error.message}`));
    else w.resolve(parsed.data.result ?? {});
  });
  let closed = false;
  // A process that dies mid-profile closes the socket: fail what waits instead of hanging the run.
  ws.addEventListener('close', () => {
    closed = true;
    for (const w of waiting.values()) w.reject(new Error(`inspector ${url}: connection closed`));
    waiting.clear();
  });
  let next = 1;
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      if (closed) return reject(new Error(`inspector ${url}: connection closed`));
      const id = next++;
      waiting.set(id, { method, resolve, reject });
      ws.send(JSON.stringify({ id, method, params }));
    });
  return { send, close: () => ws.close() };
}

/** Runs `work` with the sampling profiler of the process on `port` on; returns the `.cpuprofile`. */
export async function profileWhile(port: number, work: () => Promise<void>): Promise<string> {
  const s = await session(port);
  try {
    await s.send('Profiler.enable');
    // --cpu-prof's default interval, so profiles taken either way compare.
    await s.send('Profiler.setSamplingInterval', { interval: 1000 });
    await s.send('Profiler.start');
    await work();
    const { profile } = stopped.parse(await s.send('Profiler.stop'));
    return JSON.stringify(profile);
  } finally {
    s.close();
  }
}
