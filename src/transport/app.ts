import fs from 'node:fs';
import path from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import { ApiError } from '../pipeline/errors';
import type { Runner } from '../pipeline/run';
import { connectMiddleware } from './connect';
import { sendBytes, sendError, sendJson } from './respond';
import { restRouter } from './rest';
import { pingRouter } from './ping';
import { feedRouter } from './feeds';
import { confirmRouter } from './confirm';
import { probeRouter } from './probeApi';
import { agentRouter } from './agentApi';
import type { Db } from '../db/connect';
import type { SecretBox } from '../crypto/secrets';
import type { Services } from '../pipeline/context';
import type { RateLimits } from '../pipeline/ratelimit';
import { mountStatusPages } from '../statuspages/public';
import type { Logger } from '../log';
import { requestObserver } from '../observability/http';
import { mountHealth } from '../observability/health';
import { serverMetrics, type ServerSources } from '../observability/metrics';
import { sameSecret } from '../crypto/tokens';
import { ROOT } from '../paths';
import { mountInvitations } from '../people/public';
import { mountBillingWebhooks } from '../billing/public';
import { mountErrorIngestion } from '../errors/ingest';
import { sentryUploadRouter } from '../errors/upload/router';
import { mountAnalyticsScript } from '../analytics/scriptRoute';
import { mountAnalyticsIngestion } from '../analytics/ingest';
import { mountMcp } from '../mcp/http';
import { mountDocs } from '../docs/reference';
import { webApp } from './webApp';

/** The proto package's folder: files import each other by their path under it (`vigil/v1/common.proto`). */
const PROTO_PACKAGE_DIR = 'vigil/v1';

/** Proto files published at /api/proto, by import path, read once. */
function protoFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const dir = path.join(ROOT, 'proto', PROTO_PACKAGE_DIR);
  for (const name of fs.readdirSync(dir).sort()) {
    if (name.endsWith('.proto')) files.set(`${PROTO_PACKAGE_DIR}/${name}`, fs.readFileSync(path.join(dir, name), 'utf8'));
  }
  return files;
}

/** Errors no route caught: the error body, never Express's HTML page. */
function lastResort(log: (msg: string, e: unknown) => void) {
  return (err: unknown, req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) return next(err);
    // Express's own client errors (a path that is not valid percent-encoded UTF-8).
    const status = (err as { status?: unknown } | null)?.status;
    if (!(err instanceof ApiError) && typeof status === 'number' && status >= 400 && status < 500) {
      return sendError(req, res, new ApiError(400, 'bad_request', 'The request could not be read.', {}, [{ field: 'path', reason: String((err as Error).message ?? 'unreadable').slice(0, 200) }]));
    }
    sendError(req, res, err, log);
  };
}

/** What the non-API routes (pings, probes, status pages, health, metrics) reach directly. */
export interface AppDeps {
  db: Db; secrets: SecretBox; services: Services; limits: RateLimits;
  logger: Logger;
  /** True once shutdown began. */
  closing: () => boolean;
  metrics: ServerSources;
}

/** `/metrics`, behind `METRICS_TOKEN` as a bearer token when one is set. */
function metricsRoute(deps: AppDeps) {
  const registry = serverMetrics(deps.metrics);
  const token = deps.services.config.metricsToken;
  return async (req: Request, res: Response) => {
    const given = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (token && !sameSecret(given, token)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
      return sendError(req, res, new ApiError(401, 'unauthenticated', 'The metrics need METRICS_TOKEN as a bearer token.'));
    }
    try {
      const text = await registry.text();
      res.status(200).setHeader('Content-Type', registry.contentType);
      res.setHeader('Cache-Control', 'no-store');
      res.end(text);
    } catch (e) {
      sendError(req, res, e, (m, err) => deps.logger.error(m, err));
    }
  };
}

/** The whole HTTP surface: REST under /api/v1, Connect under /rpc, the published contract, status pages, health and metrics. */
export function createApp(runner: Runner, log: (msg: string, e: unknown) => void, deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // req.ip: the client behind the proxies TRUST_PROXY names (else the socket's peer).
  app.set('trust proxy', deps.services.config.trustProxy);
  app.use(requestObserver(deps.logger, deps.closing));

  // First: a request to a status page's custom domain is answered by that page and nothing else.
  app.locals.statusPages = mountStatusPages(app, { db: deps.db, services: deps.services, limits: deps.limits });
  mountHealth(app, { db: deps.db, lastPollAt: deps.metrics.lastPollAt, closing: deps.closing });
  app.get('/metrics', metricsRoute(deps));
  const openapi = fs.readFileSync(path.join(ROOT, 'gen/openapi.json'));
  const protos = protoFiles();
  app.get('/openapi.json', (req, res) => sendBytes(req, res, 200, 'application/json; charset=utf-8', openapi));
  // Each file is listed with the path other files import it by, and served under that path, so that
  // saving every file at its `path` gives a tree `buf generate` or `protoc -I .` takes as it is.
  app.get('/api/proto', (req, res) => {
    const base = deps.services.baseUrl();
    sendJson(req, res, 200, {
      data: [...protos.keys()].map((p) => ({ name: path.posix.basename(p), path: p, package: 'vigil.v1', url: `${base}/api/proto/${p}` })),
    });
  });
  const sendProto = (req: Request, res: Response, file: string | undefined) => {
    const text = file ? protos.get(file) : undefined;
    if (!text) return sendError(req, res, new ApiError(404, 'not_found', 'No such proto file.'));
    sendBytes(req, res, 200, 'text/plain; charset=utf-8', text);
  };
  app.get(`/api/proto/${PROTO_PACKAGE_DIR}/:file`, (req, res) => sendProto(req, res, `${PROTO_PACKAGE_DIR}/${req.params.file}`));
  // The bare file name, as listed before import paths were: kept working.
  app.get('/api/proto/:file', (req, res) => sendProto(req, res, `${PROTO_PACKAGE_DIR}/${req.params.file}`));

  app.use('/api/v1', restRouter(runner, log));
  app.use('/ping', pingRouter(deps.db, log));
  app.use('/feeds', feedRouter(deps, log));
  app.use('/confirm', confirmRouter(deps, log));
  mountInvitations(app, { db: deps.db, limits: deps.limits });
  mountBillingWebhooks(app, deps, log);
  app.use('/api/0', sentryUploadRouter({ db: deps.db, limits: deps.limits, log: deps.logger }));
  app.locals.errorIngestion = mountErrorIngestion(app, { db: deps.db, limits: deps.limits, log: deps.logger });
  mountAnalyticsScript(app);
  app.locals.analyticsIngestion = mountAnalyticsIngestion(app, { db: deps.db, log: deps.logger, limits: deps.limits });
  app.use('/probe/v1', probeRouter(deps.db, deps.secrets, log));
  app.use('/agent/v1', agentRouter(deps.db, log));
  app.use(connectMiddleware(runner, log));
  mountMcp(app, { db: deps.db, limits: deps.limits, runner, log });
  mountDocs(app);
  app.use(webApp());
  app.use((req: Request, res: Response) => sendError(req, res, new ApiError(404, 'not_found', `No route ${req.method} ${req.path}.`)));
  app.use(lastResort(log));
  return app;
}
