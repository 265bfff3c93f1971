/**
 * The billing processors' webhooks, outside `/api/v1` (they carry no API
 * key; Stripe signs its deliveries): `POST {base_url}/webhooks/stripe`.
 */
import type express from 'express';
import type { Request, Response } from 'express';
import type { Db } from '../db/connect';
import type { Services } from '../pipeline/context';
import { readBody } from '../transport/body';
import { sendError, sendJson } from '../transport/respond';
import { handleStripeWebhook } from './stripe';

/** Stripe's events are a few KiB; a generous cap. */
const WEBHOOK_LIMIT = 1024 * 1024;

export function mountBillingWebhooks(app: express.Express, deps: { db: Db; services: Services }, log: (msg: string, e: unknown) => void): void {
  app.post('/webhooks/stripe', async (req: Request, res: Response) => {
    try {
      const raw = await readBody(req, WEBHOOK_LIMIT);
      const header = req.headers['stripe-signature'];
      sendJson(req, res, 200, await handleStripeWebhook(deps.db, deps.services.config, raw, Array.isArray(header) ? header[0] : header));
    } catch (e) {
      sendError(req, res, e, log);
    }
  });
}
