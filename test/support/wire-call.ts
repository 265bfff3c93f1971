/**
 * One operation of the contract sent over any of its transports — REST JSON,
 * Connect (JSON or binary protobuf) or an MCP tool call — and its answer in
 * one shape: the HTTP status (a tool error carries its own), the error body's
 * fields, the JSON data, and every text the answer holds (files of an export
 * unzipped, protobuf decoded to JSON) for a test to search.
 */
import { fromBinary, toJson } from '@bufbuild/protobuf';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { unzipSync } from 'fflate';
import type { RouteDef } from '../../gen/routes';
import { ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { codeToHttpStatus } from '@connectrpc/connect/protocol-connect';
import { messageDesc, protoRegistry, serviceDesc } from '../../src/transport/registry';
import { referenceEncoding } from '../../src/transport/wire';

export type Transport = 'rest' | 'connect' | 'connect-proto' | 'mcp';

export interface WireRequest {
  route: RouteDef;
  token: string;
  path: Record<string, string>;
  query: Record<string, string | number | boolean>;
  body?: unknown;
  /** A raw body (x-raw-request) and its headers; REST only. */
  raw?: { bytes: Uint8Array; headers: Record<string, string> };
}

export interface WireAnswer {
  status: number;
  code?: string;
  error?: string;
  vars?: Record<string, string>;
  details?: unknown;
  /** The success JSON (`{data}` over REST and MCP, the response message over Connect). */
  json?: any;
  /** Every text of the answer: the body, the error body, each file of an export. */
  texts: string[];
}

const decoder = new TextDecoder();

/** The texts of a file answer: each file of a zip, or the file itself. */
/** How long a call reads an event stream before it hangs up. */
const STREAM_READ_MS = 400;

function fileTexts(bytes: Uint8Array, type: string | null): string[] {
  if ((type ?? '').includes('zip') || (bytes[0] === 0x50 && bytes[1] === 0x4b)) {
    try {
      return Object.entries(unzipSync(bytes)).map(([name, b]) => `${name}\n${decoder.decode(b)}`);
    } catch (e) {
      return [`(not a zip: ${(e as Error).message})`, decoder.decode(bytes)];
    }
  }
  return [decoder.decode(bytes)];
}

function errorFields(body: any): Pick<WireAnswer, 'code' | 'error' | 'vars' | 'details'> {
  if (!body || typeof body !== 'object') return {};
  return { code: body.code, error: body.error, vars: body.vars, details: body.details };
}

/** `/monitors/{id}` with its parameters, and the query string. */
export function urlOf(r: WireRequest): string {
  const path = r.route.path.replace(/\{(\w+)\}/g, (_, p: string) => encodeURIComponent(r.path[p] ?? ''));
  const q = new URLSearchParams(Object.entries(r.query).map(([k, v]) => [k, String(v)])).toString();
  return `/api/v1${path === '/' ? '' : path}${q ? `?${q}` : ''}`;
}

export async function restCall(base: string, r: WireRequest): Promise<WireAnswer> {
  const headers: Record<string, string> = { authorization: `Bearer ${r.token}` };
  let body: BodyInit | undefined;
  if (r.raw) { body = r.raw.bytes as BodyInit; Object.assign(headers, r.raw.headers); }
  else if (r.body !== undefined) { body = JSON.stringify(r.body); headers['content-type'] = 'application/json'; }
  // The event stream never ends: what it sent within a moment is its answer (the replay of a cursor, keep-alives).
  const abort = new AbortController();
  const res = await fetch(`${base}${urlOf(r)}`, { method: r.route.method, headers, body, signal: abort.signal });
  if (res.status === 200 && (res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const timer = setTimeout(() => abort.abort(), STREAM_READ_MS);
    let text = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
    } catch { /* aborted: the moment is over */ }
    clearTimeout(timer);
    return { status: res.status, texts: [text] };
  }
  const bytes = new Uint8Array(await res.arrayBuffer());
  const type = res.headers.get('content-type');
  if (res.status < 300 && r.route.rawResponse) return { status: res.status, texts: fileTexts(bytes, type) };
  const text = decoder.decode(bytes);
  let json: any;
  try { json = text ? JSON.parse(text) : undefined; } catch { /* not JSON */ }
  return { status: res.status, ...(res.status >= 300 ? errorFields(json) : {}), json: res.status < 300 ? json : undefined, texts: [text] };
}

function serviceName(r: RouteDef): string {
  return r.service.includes('.') ? r.service : `vigil.v1.${r.service}`;
}

/** The flat request message of Connect: path and query parameters by name, the body's fields beside them. */
export function connectMessage(r: WireRequest): Record<string, unknown> {
  const msg: Record<string, unknown> = { ...(r.body && typeof r.body === 'object' ? r.body as Record<string, unknown> : {}) };
  for (const [k, v] of Object.entries(r.path)) msg[k] = v;
  for (const [k, v] of Object.entries(r.query)) msg[k] = v;
  return msg;
}

export async function connectCall(base: string, r: WireRequest, binary: boolean): Promise<WireAnswer> {
  const msg = connectMessage(r);
  let body: BodyInit;
  if (binary) {
    // The contract's JSON shape as the binary message (StringList as a plain array, timestamps as RFC 3339), by protobuf-es.
    body = referenceEncoding(messageDesc(r.route.requestMessage), msg) as BodyInit;
  } else {
    body = JSON.stringify(msg);
  }
  const res = await fetch(`${base}/rpc/${serviceName(r.route)}/${r.route.rpc}`, {
    method: 'POST', headers: { authorization: `Bearer ${r.token}`, 'content-type': binary ? 'application/proto' : 'application/json' }, body,
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (res.status !== 200) {
    const text = decoder.decode(bytes);
    const header = res.headers.get('vigil-error');
    let parsed: any;
    try { parsed = header ? JSON.parse(header) : undefined; } catch { /* none */ }
    return { status: res.status, ...errorFields(parsed), texts: [text, header ?? ''] };
  }
  let json: any;
  if (binary) {
    const desc = messageDesc(r.route.responseMessage);
    json = toJson(desc, fromBinary(desc, bytes), { registry: protoRegistry() });
  } else {
    json = JSON.parse(decoder.decode(bytes));
  }
  const texts = [JSON.stringify(json)];
  // An export travels in the message as bytes (base64 in JSON).
  if (r.route.rawResponse && typeof json?.content === 'string') texts.push(...fileTexts(Buffer.from(json.content, 'base64'), json.contentType));
  return { status: r.route.successStatus, json, texts };
}

/**
 * A server-streaming RPC (the event stream) through Connect's own client:
 * the messages of a moment, each as JSON, are its answer; a refusal comes
 * as the error's status and the `vigil-error` body.
 */
export async function connectStreamCall(base: string, r: WireRequest, binary: boolean): Promise<WireAnswer> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), STREAM_READ_MS);
  const transport = createConnectTransport({
    baseUrl: `${base}/rpc`, httpVersion: '1.1', useBinaryFormat: binary,
    interceptors: [(next) => (req) => { req.header.set('authorization', `Bearer ${r.token}`); return next(req); }],
  });
  const service = serviceDesc(r.route.service);
  const method = service.methods.find((m) => m.name === r.route.rpc)!;
  const client = createClient(service, transport) as unknown as Record<string, (msg: unknown, o: { signal: AbortSignal }) => AsyncIterable<never>>;
  const texts: string[] = [];
  try {
    for await (const m of client[method.localName](connectMessage(r), { signal: abort.signal })) texts.push(JSON.stringify(toJson(method.output, m, { registry: protoRegistry() })));
  } catch (e) {
    // Our own hang-up ends the moment; anything else is the server's refusal.
    if (!abort.signal.aborted) {
      const err = ConnectError.from(e);
      const header = err.metadata.get('vigil-error');
      let parsed: any;
      try { parsed = header ? JSON.parse(header) : undefined; } catch { /* none */ }
      clearTimeout(timer);
      return { status: codeToHttpStatus(err.code), ...errorFields(parsed), texts: [...texts, err.message, header ?? ''] };
    }
  }
  clearTimeout(timer);
  return { status: r.route.successStatus, texts };
}

/** The arguments of a tool: path and query parameters by name, the body under `body`. */
export function toolArguments(r: WireRequest): Record<string, unknown> {
  return { ...r.path, ...r.query, ...(r.body !== undefined ? { body: r.body } : {}) };
}

export async function mcpCall(client: Client, r: WireRequest): Promise<WireAnswer> {
  let res: CallToolResult;
  try {
    res = (await client.callTool({ name: r.route.operationId, arguments: toolArguments(r) })) as CallToolResult;
  } catch (e) {
    // A refusal of the protocol itself (HTTP 401/413/429, an unknown tool, arguments the schema refuses).
    const m = /(\d{3})/.exec((e as Error).message);
    const status = (e as { code?: number }).code === -32602 ? 400 : m ? Number(m[1]) : 0;
    return { status, code: 'mcp_error', error: (e as Error).message, vars: {}, texts: [(e as Error).message] };
  }
  const texts: string[] = [];
  let json: any;
  for (const c of res.content as { type: string; text?: string; resource?: { blob?: string; text?: string; mimeType?: string } }[]) {
    if (c.type === 'text' && c.text !== undefined) {
      texts.push(c.text);
      try { json ??= JSON.parse(c.text); } catch { /* not JSON */ }
    } else if (c.type === 'resource' && c.resource) {
      if (c.resource.blob) texts.push(...fileTexts(Buffer.from(c.resource.blob, 'base64'), c.resource.mimeType ?? null));
      if (c.resource.text) texts.push(c.resource.text);
    }
  }
  if (res.structuredContent) texts.push(JSON.stringify(res.structuredContent));
  if (res.isError) return { status: Number(json?.status ?? 0), ...errorFields(json), texts };
  return { status: r.route.successStatus, json, texts };
}
