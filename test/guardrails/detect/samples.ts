/** Deterministic random strings for secret samples: high entropy, like real keys. */
export function randomString(seed: number, length: number, alphabet: string): string {
  let s = seed >>> 0;
  let out = '';
  for (let i = 0; i < length; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const r = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    out += alphabet[Math.floor(r * alphabet.length)];
  }
  return out;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UPPER32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const b64url = (s: string): string => Buffer.from(s).toString('base64url');

/** One credible example per high-signal secret format (random bodies, never real keys). */
export const SECRET_SAMPLES: Record<string, string> = {
  aws: `AKIA${randomString(1, 16, UPPER32)}`,
  github: `ghp_${randomString(2, 36, ALNUM)}`,
  githubFineGrained: `github_pat_${randomString(3, 82, `${ALNUM}_`)}`,
  gitlab: `glpat-${randomString(4, 20, ALNUM)}`,
  slackBot: `xoxb-123456789012-1234567890123-${randomString(5, 24, ALNUM)}`,
  slackWebhook: `https://hooks.slack.com/services/T${randomString(6, 10, UPPER32)}/B${randomString(7, 10, UPPER32)}/${randomString(8, 24, ALNUM)}`,
  stripe: `sk_live_${randomString(9, 32, ALNUM)}`,
  openai: `sk-proj-${randomString(10, 74, ALNUM)}T3BlbkFJ${randomString(11, 74, ALNUM)}`,
  anthropic: `sk-ant-api03-${randomString(12, 93, ALNUM)}AA`,
  google: `AIza${randomString(13, 35, ALNUM)}`,
  jwt: `${b64url('{"alg":"HS256","typ":"JWT"}')}.${b64url(`{"sub":"${randomString(14, 40, ALNUM)}","iat":1516239022}`)}.${randomString(15, 43, `${ALNUM}-_`)}`,
  privateKey: `-----BEGIN RSA PRIVATE KEY-----\n${Array.from({ length: 12 }, (_, i) => randomString(20 + i, 64, `${ALNUM}+/`)).join('\n')}\n-----END RSA PRIVATE KEY-----`,
};
