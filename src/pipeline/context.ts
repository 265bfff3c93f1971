import type { Caller } from '../auth/caller';
import type { Permission } from '../auth/roles';
import type { Config } from '../config';
import type { SecretBox } from '../crypto/secrets';
import type { Db } from '../db/connect';
import type { NetPolicy } from '../net/policy';
import type { RateLimits } from './ratelimit';
import type { StreamHub } from '../stream/hub';

/** Process-wide services handed to every handler. */
export interface Services {
  config: Config;
  secrets: SecretBox;
  /** Public base URL, without a trailing slash. */
  baseUrl(): string;
  /** Outbound network policy for checks and deliveries. */
  net: NetPolicy;
  /** The event stream's hub (API processes; absent elsewhere). */
  stream?: StreamHub;
}

/** What a handler gets besides its typed input: who calls, and the means to act. */
export interface Ctx {
  caller: Caller;
  db: Db;
  services: Services;
  now: Date;
  /** Rate limits beyond the operation's bucket (sign-in attempts per account and address). */
  limits: RateLimits;
  /**
   * Where the request comes from (sign-in throttling, the sessions list) and
   * the `Host` it named (the index's addresses when no BASE_URL is set).
   */
  client: { address: string | null; userAgent: string | null; host?: string | null };
  /** Throws 403 naming `permission` unless the caller holds it. */
  require(permission: Permission): void;
}
