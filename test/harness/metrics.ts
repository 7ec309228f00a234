/**
 * A metric's value as a process's `/metrics` endpoint serves it: the sum over every series of `name`
 * whose labels include `labels` (all of its series without them; 0 when there are none).
 */
export async function metricValue(
  metricsUrl: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const l = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`))) total += Number(m[3]);
  }
  return total;
}
