import type pg from 'pg';
import type { Runner, TaskList } from 'graphile-worker';
import type { SecretBox } from '../crypto/secrets';
import type { Db } from '../db/connect';
import type { Logger } from '../log';
import type { Services } from '../pipeline/context';
import { deliverTask } from '../alerting/deliver';
import { escalateTask } from '../alerting/escalation';
import { passwordResetTask } from '../people/sessions';
import { startQueue } from './queue';
import { statusNewsTask, statusNotifyTask } from '../statuspages/news';

/** What every task of the queue may use. */
export interface TaskDeps { db: Db; secrets: SecretBox; services: Services }

/**
 * Every task of the job queue, by name: the one list of background work with
 * retries. A room that needs one adds it here (and queues it with `enqueue`
 * inside the transaction that decides it).
 */
export function taskList(deps: TaskDeps): TaskList {
  return {
    deliver: deliverTask(deps.db, deps.secrets, deps.services),
    escalate: escalateTask(deps.db),
    status_news: statusNewsTask(deps),
    status_notify: statusNotifyTask(deps),
    password_reset: passwordResetTask(deps),
  };
}

/** Runs the job queue's tasks in this process. */
export async function startJobs(pool: pg.Pool, deps: TaskDeps, log: Logger): Promise<Runner> {
  return startQueue(pool, taskList(deps), log);
}
