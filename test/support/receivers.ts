/**
 * Local stand-ins for the outside world alerts go to: an HTTP receiver
 * (webhooks, chat, Telegram/PagerDuty/JSM APIs) and an SMTP server. Both bind
 * 127.0.0.1 on a free port and record everything they get.
 *
 *   const hook = await startHttpReceiver();
 *   hook.respondWith(500, { error: 'down' });        // sticky until changed
 *   const [req] = await hook.waitFor(1);
 *   const smtp = await startSmtpServer();            // providers.smtpUrl = smtp.url
 *   smtp.rejectNext('550 5.1.1 mailbox unavailable'); // the next RCPT TO is refused with these words
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One request the HTTP receiver got. Header names are lower-case; `json` is null when the body is not JSON. */
export interface ReceivedRequest { method: string; path: string; headers: Record<string, string>; body: string; json: any }

/** A recording HTTP server. */
export interface HttpReceiver {
  /** http://127.0.0.1:<port> (no trailing slash); append any path. */
  url: string;
  /** Every request so far, in arrival order. */
  requests: ReceivedRequest[];
  /**
   * Sets the answer to every following request (default 200 `{"ok":true}`):
   * a string body is sent verbatim, anything else as JSON, undefined as
   * `{"ok":true}`. `headers` (optional) are added, e.g. a Location for a 3xx.
   */
  respondWith(status: number, body?: unknown, headers?: Record<string, string>): void;
  /** Resolves with all requests once there are at least `n`; rejects after `ms` (default 10 s). */
  waitFor(n: number, ms?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** A watcher list: `wait` resolves when `ready()` holds, re-checked on every `notify`. */
function waiters<T>(ready: (n: number) => boolean, current: () => T[], what: string) {
  const pending = new Set<() => void>();
  return {
    notify: () => { for (const check of [...pending]) check(); },
    wait(n: number, ms: number): Promise<T[]> {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!ready(n)) return;
          pending.delete(check);
          clearTimeout(timer);
          resolve([...current()]);
        };
        const timer = setTimeout(() => {
          pending.delete(check);
          reject(new Error(`expected ${n} ${what} within ${ms} ms, got ${current().length}`));
        }, ms);
        pending.add(check);
        check();
      });
    },
  };
}

/** Starts an HTTP receiver on 127.0.0.1 (free port) that records every request. */
export async function startHttpReceiver(): Promise<HttpReceiver> {
  const requests: ReceivedRequest[] = [];
  let answer = { status: 200, body: '{"ok":true}', type: 'application/json', headers: {} as Record<string, string> };
  const watch = waiters((n) => requests.length >= n, () => requests, 'requests');
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: any = null;
      try { json = JSON.parse(body); } catch { /* not JSON */ }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers, body, json });
      const { status, body: out, type, headers: extra } = answer;
      const empty = status === 204 || status === 304;
      res.writeHead(status, { ...(empty ? {} : { 'Content-Type': type }), ...extra });
      res.end(empty ? undefined : out);
      watch.notify();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respondWith(status, body, headers = {}) {
      if (body === undefined) answer = { status, body: '{"ok":true}', type: 'application/json', headers };
      else if (typeof body === 'string') {
        let type = 'text/plain; charset=utf-8';
        try { JSON.parse(body); type = 'application/json'; } catch { /* plain text */ }
        answer = { status, body, type, headers };
      } else answer = { status, body: JSON.stringify(body), type: 'application/json', headers };
    },
    waitFor: (n, ms = 10_000) => watch.wait(n, ms),
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** One mail the SMTP server accepted: envelope sender and recipients, decoded subject and plain text. */
export interface ReceivedMail { from: string; to: string[]; subject: string; text: string; headers: Record<string, string> }

/** A recording SMTP server. */
export interface SmtpReceiver {
  /** smtp://127.0.0.1:<port>, for providers.smtpUrl. */
  url: string;
  messages: ReceivedMail[];
  /** Refuses the next RCPT TO with `message` ("550 5.1.1 mailbox unavailable"; a leading code is used, else 550). */
  rejectNext(message: string): void;
  /** Resolves with all messages once there are at least `n`; rejects after `ms` (default 10 s). */
  waitFor(n: number, ms?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/** Bytes of a quoted-printable string (soft line breaks removed), read as UTF-8. */
function decodeQuotedPrintable(s: string): string {
  const bytes: number[] = [];
  const text = s.replace(/=\r?\n/g, '');
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(text[i], 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** RFC 2047 encoded words (=?UTF-8?Q?…?= / ?B?) decoded; adjacent words are joined as the RFC says. */
function decodeHeader(value: string): string {
  const joined = value.replace(/\?=\s+=\?/g, '?==?');
  const parts: string[] = [];
  let bytes: Buffer[] = [];
  let last = 0;
  const flush = () => { if (bytes.length) parts.push(Buffer.concat(bytes).toString('utf8')); bytes = []; };
  for (const m of joined.matchAll(/=\?[^?]+\?([QqBb])\?([^?]*)\?=/g)) {
    if (m.index! > last) { flush(); parts.push(joined.slice(last, m.index)); }
    bytes.push(m[1].toUpperCase() === 'B'
      ? Buffer.from(m[2], 'base64')
      : Buffer.from(decodeQuotedPrintable(m[2].replace(/_/g, ' ')), 'utf8'));
    last = m.index! + m[0].length;
  }
  flush();
  parts.push(joined.slice(last));
  return parts.join('');
}

/** Splits a MIME entity into lower-cased headers and its raw body. */
function splitEntity(raw: string): { headers: Record<string, string>; body: string } {
  const cut = raw.search(/\r?\n\r?\n/);
  const head = cut < 0 ? raw : raw.slice(0, cut);
  const body = cut < 0 ? '' : raw.slice(cut).replace(/^\r?\n\r?\n/, '');
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] ??= line.slice(colon + 1).trim();
  }
  return { headers, body };
}

/** The plain text of an entity: its body decoded, or the first text/plain part of a multipart. */
function plainText(raw: string): string {
  const { headers, body } = splitEntity(raw);
  const type = headers['content-type'] ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (/^multipart\//i.test(type) && boundary) {
    const parts = body.split(`--${boundary}`).slice(1).filter((p) => !p.startsWith('--'));
    const texts = parts.map((p) => ({ type: splitEntity(p.replace(/^\r?\n/, '')).headers['content-type'] ?? 'text/plain', p }));
    const pick = texts.find((t) => /^text\/plain/i.test(t.type)) ?? texts[0];
    return pick ? plainText(pick.p.replace(/^\r?\n/, '')) : '';
  }
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  const text = encoding === 'quoted-printable' ? decodeQuotedPrintable(body)
    : encoding === 'base64' ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
    : body;
  return text.replace(/\r\n/g, '\n').replace(/\n+$/, '');
}

/** Starts an SMTP server on 127.0.0.1 (free port): no TLS, no auth, every accepted mail recorded. */
export async function startSmtpServer(): Promise<SmtpReceiver> {
  const messages: ReceivedMail[] = [];
  let rejection: { code: number; text: string } | null = null;
  const watch = waiters((n) => messages.length >= n, () => messages, 'messages');
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    closeTimeout: 1000,
    onRcptTo(_address, _session, callback) {
      if (!rejection) return callback();
      const { code, text } = rejection;
      rejection = null;
      callback(Object.assign(new Error(text), { responseCode: code }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const { headers } = splitEntity(raw);
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        messages.push({ from, to: session.envelope.rcptTo.map((r) => r.address), subject: decodeHeader(headers.subject ?? ''), text: plainText(raw), headers });
        callback();
        watch.notify();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = (server as unknown as { server: { address(): AddressInfo } }).server.address();
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    rejectNext(message) {
      const m = /^([45]\d\d)\s+(.*)$/s.exec(message.trim());
      rejection = m ? { code: Number(m[1]), text: m[2] } : { code: 550, text: message };
    },
    waitFor: (n, ms = 10_000) => watch.wait(n, ms),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
