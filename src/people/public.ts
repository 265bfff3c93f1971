/**
 * The invitation page, `{base_url}/invitations/<token>`: GET shows who
 * invites the person where, with a form (name and password for a newcomer;
 * one button for someone who already has an account); POST accepts it, from
 * the form or as JSON (`{"name", "password"}` → 201 with the membership).
 * Server-rendered, no script, the same strict headers as status pages.
 *
 * The password-reset page, `{base_url}/password-reset/<token>` (the link of
 * the reset e-mail): GET shows a form for the new password, POST sets it.
 *
 * Tokens are 256 random bits and cannot be guessed, but every request costs a
 * lookup and an accepted form a password hash: each request spends a point of
 * `link_address` for its client address before any of that (429 with
 * `Retry-After` past it).
 */
import express, { type Request, type Response, type NextFunction } from 'express';
import type { Db } from '../db/connect';
import { PASSWORD_LENGTH } from '../crypto/passwords';
import { ApiError } from '../pipeline/errors';
import type { RateLimits } from '../pipeline/ratelimit';
import { escapeHtml, htmlDocument, pageSecurityHeaders } from '../pipeline/html';
import { BODY_LIMITS, drainUnread, readForm } from '../transport/body';
import { acceptInvitation, invitationByToken } from './invitations';
import { resetPassword, resetTokenValid, startSession, type SessionClient } from './sessions';
import { setSessionCookie } from '../transport/rest';

/** Where a page's request comes from, for the session it may start. */
const clientOf = (req: Request): SessionClient => ({ address: req.ip ?? null, userAgent: req.headers['user-agent']?.slice(0, 200) ?? null });

const CSS = `body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111827;background:#f3f4f6}
main{max-width:28rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:.75rem;box-shadow:0 1px 3px rgba(0,0,0,.1)}
h1{font-size:1.35rem;margin:0 0 1rem}label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input{width:100%;padding:.5rem;border:1px solid #d1d5db;border-radius:.375rem;font:inherit;box-sizing:border-box}
button{margin-top:1.25rem;padding:.6rem 1rem;border:0;border-radius:.375rem;background:#2563eb;color:#fff;font:inherit;font-weight:600;cursor:pointer}
.error{color:#b91c1c}.muted{color:#6b7280;font-size:.9rem}`;

function page(res: Response, status: number, title: string, body: string): void {
  // The web app's icon (served beside it): without one the browser asks for /favicon.ico, a 404.
  const doc = htmlDocument({ lang: 'en', title, css: CSS, body, noindex: true, head: '<link rel="icon" href="/favicon.svg" type="image/svg+xml">' });
  pageSecurityHeaders(res, doc.csp);
  res.status(status).setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'private, no-store');
  res.end(doc.html);
}

const wantsJson = (req: Request) => /application\/json/i.test(`${req.headers['content-type'] ?? ''} ${req.headers.accept ?? ''}`);

type Pending = NonNullable<Awaited<ReturnType<typeof invitationByToken>>>;

function form(inv: Pending, action: string, error?: string): string {
  const fields = inv.hasAccount
    ? `<p class="muted">You already have a Vigil account as ${escapeHtml(inv.email)}: accepting adds ${escapeHtml(inv.organization)} to it.</p>`
    : `<label for="name">Your name</label><input id="name" name="name" required maxlength="80" autocomplete="name">
<label for="password">Choose a password</label><input id="password" name="password" type="password" required minlength="${PASSWORD_LENGTH.min}" maxlength="${PASSWORD_LENGTH.max}" autocomplete="new-password">
<p class="muted">${PASSWORD_LENGTH.min} to ${PASSWORD_LENGTH.max} characters. You sign in with ${escapeHtml(inv.email)}.</p>`;
  return `<h1>Join ${escapeHtml(inv.organization)} on Vigil</h1>
<p>You were invited as <strong>${escapeHtml(inv.role)}</strong> (${escapeHtml(inv.email)}).</p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}<form method="post" action="${escapeHtml(action)}">${fields}
<button type="submit">Accept the invitation</button></form>`;
}

/** Spends the client address's point for a link page; past the limit answers 429 (as the page, or JSON) and false. */
async function admitted(req: Request, res: Response, limits: RateLimits): Promise<boolean> {
  try {
    await limits.consume(`address:${req.ip ?? ''}`, 'link_address');
    return true;
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 429) throw e;
    drainUnread(req);
    for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
    if (!wantsJson(req)) {
      page(res, 429, 'Too many requests', `<h1>Too many requests</h1><p>Try again in ${escapeHtml(e.vars.retryAfter ?? '60')} seconds.</p>`);
      return false;
    }
    pageSecurityHeaders(res, null);
    res.status(429).setHeader('Cache-Control', 'private, no-store');
    res.json(e.toBody());
    return false;
  }
}

const GONE = '<h1>This invitation link does not work</h1><p>It was used, withdrawn or has expired. Ask whoever invited you for a new one.</p>';

/** Mounts `/invitations/:token` on `app`. */
export function mountInvitations(app: express.Express, deps: { db: Db; limits: RateLimits }): void {
  app.get('/invitations/:token', async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (!(await admitted(req, res, deps.limits))) return;
      const inv = await invitationByToken(deps.db, String(req.params.token));
      if (!inv) return page(res, 404, 'Invitation', GONE);
      page(res, 200, `Join ${inv.organization}`, form(inv, req.originalUrl.split('?')[0]));
    } catch (e) {
      next(e);
    }
  });

  app.post('/invitations/:token', async (req: Request, res: Response, next: NextFunction) => {
    const json = wantsJson(req);
    const token = String(req.params.token);
    try {
      if (!(await admitted(req, res, deps.limits))) return;
      const input = await readForm(req, BODY_LIMITS.statusPageForm);
      try {
        const done = await acceptInvitation(deps.db, token, { name: input.name, password: input.password });
        if (json) {
          pageSecurityHeaders(res, null);
          res.status(201).setHeader('Cache-Control', 'private, no-store');
          return res.json({ data: { organizationId: done.organizationId, membershipId: done.membershipId, userId: done.userId, role: done.role, signedIn: null } });
        }
        // A newcomer who chose a password here lands signed in, in the organisation they joined.
        if (done.passwordSet) {
          const session = await startSession(deps.db, done.userId, clientOf(req), done.organizationId);
          setSessionCookie(req, res, session.token);
          return page(res, 201, 'Welcome', `<h1>Welcome to ${escapeHtml(done.organization)}</h1><p>You are now a member as <strong>${escapeHtml(done.role)}</strong>, signed in as ${escapeHtml(done.email)}.</p><p><a href="/">Continue to Vigil</a></p>`);
        }
        page(res, 201, 'Welcome', `<h1>Welcome to ${escapeHtml(done.organization)}</h1><p>You are now a member as <strong>${escapeHtml(done.role)}</strong>. Sign in with ${escapeHtml(done.email)}.</p>`);
      } catch (e) {
        if (!(e instanceof ApiError) || e.status >= 500) throw e;
        drainUnread(req);
        if (json) {
          pageSecurityHeaders(res, null);
          res.status(e.status).setHeader('Cache-Control', 'private, no-store');
          return res.json(e.toBody());
        }
        const inv = e.status === 404 ? null : await invitationByToken(deps.db, token);
        if (!inv) return page(res, 404, 'Invitation', GONE);
        const field = e.fields[0]?.field;
        page(res, 400, `Join ${inv.organization}`, form(inv, req.originalUrl.split('?')[0], `${field === 'name' ? 'Your name' : 'The password'} ${e.fields[0]?.reason ?? 'is not valid'}.`));
      }
    } catch (e) {
      next(e);
    }
  });

  const RESET_GONE = '<h1>This reset link does not work</h1><p>It was used, replaced or has expired. Ask for a new one.</p>';
  const resetForm = (action: string, error?: string) => `<h1>Set a new password</h1>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}<form method="post" action="${escapeHtml(action)}">
<label for="password">New password</label><input id="password" name="password" type="password" required minlength="${PASSWORD_LENGTH.min}" maxlength="${PASSWORD_LENGTH.max}" autocomplete="new-password">
<p class="muted">${PASSWORD_LENGTH.min} to ${PASSWORD_LENGTH.max} characters. Every signed-in session ends.</p><button type="submit">Set the password</button></form>`;

  app.get('/password-reset/:token', async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (!(await admitted(req, res, deps.limits))) return;
      if (!(await resetTokenValid(deps.db, String(req.params.token)))) return page(res, 404, 'Password reset', RESET_GONE);
      page(res, 200, 'Set a new password', resetForm(req.originalUrl.split('?')[0]));
    } catch (e) {
      next(e);
    }
  });

  app.post('/password-reset/:token', async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (!(await admitted(req, res, deps.limits))) return;
      const input = await readForm(req, BODY_LIMITS.statusPageForm);
      try {
        // The link proved the person: they land signed in (the first owner's printed link included).
        const done = await resetPassword(deps.db, { token: String(req.params.token), password: input.password ?? '', signIn: true }, clientOf(req));
        if (done.signedIn) setSessionCookie(req, res, done.signedIn.token);
        page(res, 200, 'Password set', `<h1>Your password is set</h1><p>You are signed in.</p><p><a href="/">Continue to Vigil</a></p>`);
      } catch (e) {
        if (!(e instanceof ApiError) || e.status >= 500) throw e;
        if (e.code === 'reset_link_invalid') return page(res, 404, 'Password reset', RESET_GONE);
        page(res, 400, 'Set a new password', resetForm(req.originalUrl.split('?')[0], `The password ${e.fields[0]?.reason ?? 'is not valid'}.`));
      }
    } catch (e) {
      next(e);
    }
  });
}
