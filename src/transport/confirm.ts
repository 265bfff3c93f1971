import express, { type Request, type Response, type Router } from 'express';
import { confirmByToken } from '../domain/channels';
import { sendBytes, sendError } from './respond';
import { escapeHtml } from '../pipeline/html';
import { ApiError } from '../pipeline/errors';
import { BODY_LIMITS, readBody } from './body';
import type { AppDeps } from './app';


/** A small self-contained page: no script, no external resources. */
function page(title: string, text: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><link rel="icon" href="/favicon.svg" type="image/svg+xml">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}</style></head>
<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body>
</html>
`;
}

function sendPage(req: Request, res: Response, status: number, html: string): void {
  // The URL is a credential: never leak it to another site; the page runs nothing.
  res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  sendBytes(req, res, status, 'text/html; charset=utf-8', html);
}

/**
 * The confirmation link of an email channel: `/confirm/<token>`, by GET (the
 * link in the message) or POST. Following it confirms the channel once; an
 * unknown, used or rotated token is 404. GET confirms directly: a mail
 * scanner that prefetches the link confirms the address too, which is
 * acceptable because the link only ever reaches that mailbox (whoever reads
 * it could follow it anyway). HEAD confirms nothing.
 */
export function confirmRouter(deps: Pick<AppDeps, 'db'>, log: (msg: string, e: unknown) => void): Router {
  const router = express.Router();
  const handle = async (req: Request, res: Response) => {
    try {
      // A POST body is read (within its small limit) and dropped.
      if (req.method === 'POST') await readBody(req, BODY_LIMITS.confirm);
      const done = await confirmByToken(deps.db, String(req.params.token));
      if (!done) {
        return sendPage(req, res, 404, page('Link not valid', 'This confirmation link is unknown, was already used, or was replaced by a newer one. Ask for a new confirmation message.'));
      }
      sendPage(req, res, 200, page(`Alerts to ${done.target} confirmed`, `Alerts to ${done.target} confirmed. You will now receive the alerts sent to this channel.`));
    } catch (e) {
      if (e instanceof ApiError) return sendError(req, res, e);
      log('confirmation link failed', e);
      sendPage(req, res, 500, page('Something went wrong', 'The confirmation could not be recorded. Please try the link again later.'));
    }
  };
  // HEAD (link checkers) changes nothing; Express would otherwise run the GET handler for it.
  router.head('/:token', (req, res) => sendPage(req, res, 200, ''));
  router.get('/:token', handle);
  router.post('/:token', handle);
  return router;
}
