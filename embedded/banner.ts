import type { LoadedConfig, Verdict } from '#operator';

/** What to print at start: where the gateway is and a call that works against this config. */
export function startBanner(
  url: string,
  metricsUrl: string,
  dir: string,
  loaded: LoadedConfig,
  verdicts: Verdict[],
  console: { served: boolean; link: string | undefined } = { served: false, link: undefined },
  /** `<namespace>/<name>` → URL of the MCP demo servers embedded mode started. */
  demoServers: ReadonlyMap<string, string> = new Map(),
): string {
  const ready = verdicts.filter((v) => v.ok);
  const workflows = ready
    .filter((v) => v.ref.kind === 'Workflow')
    .map((v) => String(v.details.apiName ?? v.ref.name));
  const keyObject = loaded.objects.find(
    (o) =>
      o.kind === 'ApiKey' &&
      ready.some(
        (v) =>
          v.ref.kind === 'ApiKey' &&
          v.ref.name === o.metadata.name &&
          v.ref.namespace === o.metadata.namespace,
      ),
  );
  let key = '<your sy_live_ key>';
  if (keyObject?.kind === 'ApiKey' && keyObject.spec.secretRef) {
    const ref = keyObject.spec.secretRef;
    const secret = loaded.secrets.find(
      (s) => s.namespace === keyObject.metadata.namespace && s.name === ref.name,
    );
    key = secret?.data[ref.key]?.trim() ?? key;
  }
  // Prefer a plain chat workflow for the example call: it needs nothing but messages.
  const chat = loaded.objects.find(
    (o) =>
      o.kind === 'Workflow' &&
      o.spec.requestType === 'chat' &&
      !o.spec.structuredOutput &&
      !o.spec.eventName &&
      workflows.includes(o.spec.name ?? o.metadata.name),
  );
  const wf =
    chat?.kind === 'Workflow' ? (chat.spec.name ?? chat.metadata.name) : (workflows[0] ?? '<workflow>');
  const lines = [
    '',
    `Switchyard gateway (embedded mode) is serving ${dir}: ${workflows.length} workflow(s), ${verdicts.length - ready.length} object(s) not ready, ${loaded.problems.length} problem(s).`,
    `  API:     ${url}   (also under ${url}/api)`,
    `  Metrics: ${metricsUrl}/metrics   Ready: ${metricsUrl}/readyz`,
    `  Workflows: ${workflows.join(', ') || '(none)'}`,
    consoleLine(url, console),
    ...mcpLine(url, ready, demoServers),
    '',
    'Try it:',
    `  curl -s ${url}/v1/ai -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' \\`,
    `    -d '{"workflow":"${wf}","format":"wrapped","messages":[{"role":"user","content":"Hello!"}]}'`,
    '',
    `  OpenAI SDK: new OpenAI({ baseURL: '${url}/v1', apiKey: '${key}' }) with model: '${wf}'`,
    '',
  ];
  return lines.join('\n');
}

/** Where the web console is, with its one-time sign-in link when a key has the console scope. */
function consoleLine(url: string, c: { served: boolean; link: string | undefined }): string {
  if (!c.served) return '  Console: not built (make console builds it; SWITCHYARD_CONSOLE=off turns it off)';
  if (!c.link) return `  Console: ${url}/console/   (sign in with a key that has the console scope)`;
  return `  Console: ${url}/console/#/link/${c.link}   (one-time sign-in link)`;
}

/** The MCP endpoint and the servers behind it (none: no line). */
function mcpLine(url: string, ready: readonly Verdict[], demo: ReadonlyMap<string, string>): string[] {
  const servers = ready
    .filter((v) => v.ref.kind === 'MCPServer')
    .map((v) => {
      const at = demo.get(`${v.ref.namespace}/${v.ref.name}`);
      return at ? `${v.ref.name} (built-in demo at ${at})` : v.ref.name;
    });
  return servers.length ? [`  MCP:     ${url}/v1/mcp   servers: ${servers.join(', ')}`] : [];
}
