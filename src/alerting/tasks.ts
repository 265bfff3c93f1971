import type pg from 'pg';
import type { Runner } from 'graphile-worker';
import type { SecretBox } from '../crypto/secrets';
import type { Db } from '../db/connect';
import type { Logger } from '../log';
import type { Services } from '../pipeline/context';
import { deliverTask } from './deliver';
import { escalateTask } from './escalation';
import { startQueue } from './queue';

/** Runs the alerting tasks (deliveries, escalation steps) in this process. */
export async function startAlerting(pool: pg.Pool, db: Db, secrets: SecretBox, services: Services, log: Logger): Promise<Runner> {
  return startQueue(pool, { deliver: deliverTask(db, secrets, services), escalate: escalateTask(db) }, log);
}
