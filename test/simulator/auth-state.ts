/**
 * The credentials the simulator accepts: the AWS key pair it was given plus the temporary keys its
 * fake STS issued (Bedrock checks SigV4 signatures against them), and the access tokens its fake
 * Google token endpoint and metadata server issued (Vertex AI checks the bearer against them).
 * Issued credentials expire on the simulator's clock, like the real ones.
 */
import { randomBytes } from 'node:crypto';
import type { SimulatorOptions } from './types.ts';

export interface AwsKey {
  secretAccessKey: string;
  sessionToken: string | undefined;
  expiresAt: number;
}

export class AuthState {
  readonly aws = new Map<string, AwsKey>();
  readonly bearer = new Map<string, number>();
  readonly opts: Pick<SimulatorOptions, 'aws' | 'webIdentity' | 'google'>;

  constructor(opts: Pick<SimulatorOptions, 'aws' | 'webIdentity' | 'google'>) {
    this.opts = opts;
    if (opts.aws)
      this.aws.set(opts.aws.accessKeyId, {
        secretAccessKey: opts.aws.secretAccessKey,
        sessionToken: opts.aws.sessionToken,
        expiresAt: Number.POSITIVE_INFINITY,
      });
  }

  issueAwsKeys(seconds: number): {
    accessKeyId: string;
    secretAccessKey: string;
    sessionToken: string;
    expiresAt: number;
  } {
    const key = {
      accessKeyId: `ASIASIM${randomBytes(6).toString('hex').toUpperCase()}`,
      secretAccessKey: randomBytes(30).toString('base64'),
      sessionToken: `IQoJb3JpZ2luX2VjE${randomBytes(48).toString('base64')}`,
      expiresAt: Date.now() + seconds * 1000,
    };
    this.aws.set(key.accessKeyId, key);
    return key;
  }

  issueBearer(seconds: number): string {
    const token = `ya29.sim-${randomBytes(24).toString('base64url')}`;
    this.bearer.set(token, Date.now() + seconds * 1000);
    return token;
  }

  /** 'ok', or why the token is refused. */
  checkBearer(token: string): 'ok' | 'unknown' | 'expired' {
    const expiresAt = this.bearer.get(token);
    if (expiresAt === undefined) return 'unknown';
    return Date.now() < expiresAt ? 'ok' : 'expired';
  }
}
