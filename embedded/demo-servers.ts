import type { Logger } from 'pino';
import type { SwitchyardObject } from '#operator/resources/index';
import type { DemoMcpServer } from './demo-mcp-server.ts';

/**
 * MCPServers annotated with this (value "true") are served by embedded mode itself: it starts the
 * built-in demo server (echo, add, time) on loopback before compiling, so `make run` shows tools
 * without a network. The operator ignores the annotation.
 */
export const DEMO_ANNOTATION = 'switchyard.dev/embedded-demo-server';

const isDemo = (o: SwitchyardObject): boolean =>
  o.kind === 'MCPServer' && o.metadata.annotations?.[DEMO_ANNOTATION] === 'true';

/**
 * The demo servers of one embedded process, by `<namespace>/<name>`; they outlive config reloads.
 * Each listens on the port of its MCPServer's URL when that is free on loopback, else on any free
 * port (two `make run`s, or tests, side by side), and the object's URL is pointed at it.
 */
export class EmbeddedDemoServers {
  readonly #running = new Map<string, DemoMcpServer>();
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Starts what the objects ask for and returns them with their URLs pointing at it. */
  async apply(objects: readonly SwitchyardObject[]): Promise<SwitchyardObject[]> {
    if (!objects.some(isDemo)) return [...objects];
    // The SDK's server is a development dependency: loaded only when a demo server is asked for.
    const { startDemoMcpServer } = await import('./demo-mcp-server.ts');
    const out: SwitchyardObject[] = [];
    for (const o of objects) {
      if (!isDemo(o) || o.kind !== 'MCPServer') {
        out.push(o);
        continue;
      }
      const id = `${o.metadata.namespace}/${o.metadata.name}`;
      let demo = this.#running.get(id);
      if (!demo) {
        const wanted = Number(new URL(o.spec.url).port) || 0;
        demo = await startDemoMcpServer({ port: wanted }).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'EADDRINUSE') throw err;
          this.#logger.info({ msg: `MCP demo server ${id}: port ${wanted} is taken; using a free one` });
          return startDemoMcpServer({ port: 0 });
        });
        this.#running.set(id, demo);
        this.#logger.info({ msg: `MCP demo server ${id} (echo, add, time) at ${demo.url}` });
      }
      out.push({ ...o, spec: { ...o.spec, url: demo.url } });
    }
    return out;
  }

  /** `<namespace>/<name>` → URL of every demo server running. */
  urls(): Map<string, string> {
    return new Map([...this.#running].map(([id, d]) => [id, d.url]));
  }

  async close(): Promise<void> {
    await Promise.all([...this.#running.values()].map((d) => d.close()));
    this.#running.clear();
  }
}
