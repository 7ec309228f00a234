// The subset of autocannon's API the bench uses (the package ships no types).
declare module 'autocannon' {
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
    overallRate?: number;
    ignoreCoordinatedOmission?: boolean;
  }
  interface Stats {
    average: number;
    p50: number;
    p99: number;
  }
  interface Result {
    requests: Stats;
    latency: Stats;
    errors: number;
    timeouts: number;
    non2xx: number;
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
