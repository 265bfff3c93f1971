import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '../pipeline/errors';
import type { Credentials, RawRequest, Runner } from '../pipeline/run';
import { asApiError } from '../transport/respond';
import { bufferedFile, type FileAnswer } from '../transport/fileAnswer';
import { agentPermissions, spansExcludedAreas, type ToolDef } from './tools';

/** What a tool call needs from the HTTP request that carried it. */
export interface CallContext {
  runner: Runner;
  /** The /mcp request's bearer key and client; never its cookie. */
  credentials: Credentials;
  log: (msg: string, e: unknown) => void;
}

/** A URL query value as REST would receive it: text (the query validator coerces it to the declared type). */
function asQueryValue(v: unknown): unknown {
  return typeof v === 'number' || typeof v === 'boolean' ? String(v) : v;
}

/**
 * Splits the arguments into the REST request's parts: path and query
 * parameters by name, the body under `body`. A tool that takes a body also
 * takes its fields as arguments of their own, beside the path parameters
 * (`{id, name}` as well as `{id, body: {name}}`), since a call is "the same
 * request the key would make directly" and a client may well pass that
 * request's body as the arguments; the two forms together are refused. An
 * unknown argument or a missing or non-text path parameter is a 400 like
 * any bad input.
 */
function requestOf(tool: ToolDef, args: Record<string, unknown>, credentials: Credentials): RawRequest {
  const { route } = tool;
  const params = new Set([...route.pathParams, ...route.queryParams.map((q) => q.name)]);
  const takesBody = 'body' in (tool.inputSchema.properties as object);
  const loose = Object.keys(args).filter((name) => !params.has(name) && name !== 'body');
  const flat = takesBody && args.body === undefined && loose.length > 0;
  const path: Record<string, string> = {};
  const query: Record<string, unknown> = {};
  if (!flat) {
    for (const name of [...loose, ...(takesBody ? [] : Object.keys(args).filter((n) => n === 'body'))]) {
      const reason = takesBody ? 'is not a known argument (send the body either under body or as fields of their own, not both)' : 'is not a known argument';
      throw new ApiError(400, 'unknown_field', `Invalid field ${name}: ${reason} of ${tool.name}.`, { field: name }, [{ field: name, reason: 'is not a known field' }]);
    }
  }
  for (const name of route.pathParams) {
    const v = args[name];
    if (typeof v !== 'string' || v === '') throw new ApiError(400, 'missing_field', `Invalid field ${name}: is required (a string).`, { field: name }, [{ field: name, reason: 'is required' }]);
    path[name] = v;
  }
  for (const q of route.queryParams) if (args[q.name] !== undefined && args[q.name] !== null) query[q.name] = asQueryValue(args[q.name]);
  const body = flat ? Object.fromEntries(loose.map((name) => [name, args[name]])) : args.body;
  return { credentials, path, query, body: route.body === 'none' ? undefined : body };
}

/**
 * A runner result as tool content: the JSON answer as text (and structured),
 * a file (an export, read whole as protobuf answers are) as an embedded resource.
 */
async function success(tool: ToolDef, result: unknown): Promise<CallToolResult> {
  if (tool.route.rawResponse) {
    const file = await bufferedFile(result as FileAnswer);
    const uri = `vigil:///export/${encodeURIComponent(file.filename)}`;
    const textual = /^(text\/|application\/json)/.test(file.contentType);
    const content = file.content;
    return {
      content: [{
        type: 'resource',
        resource: textual ? { uri, mimeType: file.contentType, text: content.toString('utf8') } : { uri, mimeType: file.contentType, blob: content.toString('base64') },
      }],
    };
  }
  const structured = (result && typeof result === 'object' ? result : { data: result }) as Record<string, unknown>;
  return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: structured };
}

/** A refusal as a tool error: the REST error body, with its HTTP status. */
function failure(err: unknown, log: CallContext['log']): CallToolResult {
  const e = asApiError(err, log);
  const body = { status: e.status, ...e.toBody() };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}

/**
 * Runs a tool call as the request the key would make directly: the runner
 * authenticates the key, spends the operation's own bucket (the second
 * count: the call itself was counted by the HTTP endpoint), checks the
 * permission, validates and runs the handler, which writes the same audit
 * entry under the same tenant filter. An operation that reads across areas
 * (search, export) runs without the permissions of the excluded areas
 * (`agentPermissions`), so that it leaves them out as for a key lacking
 * them; every other one runs with the key's own, and answers exactly as
 * REST does (the index included: it describes the REST API for the key).
 */
export async function callTool(tool: ToolDef, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
  const credentials: Credentials = { ...ctx.credentials, method: tool.route.method };
  try {
    const caller = await ctx.runner.admit(tool.route, credentials);
    const raw = requestOf(tool, args, credentials);
    const agent = spansExcludedAreas(tool.route) ? { ...caller, permissions: agentPermissions(caller.permissions) } : caller;
    return await success(tool, await ctx.runner.execute(tool.route, raw, agent));
  } catch (err) {
    return failure(err, ctx.log);
  }
}
