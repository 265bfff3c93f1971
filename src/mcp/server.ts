import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { callTool, type CallContext } from './call';
import type { ToolDef } from './tools';

const INSTRUCTIONS = [
  'Vigil monitoring: each tool is one operation of the REST API (/api/v1), named by its operationId,',
  'run as the request your key would make directly (same permissions, workspaces, audit log and rate limits).',
  'Arguments: path and query parameters by name; a request body under `body` (or its fields as arguments of their own).',
  'A result is the JSON answer of the operation; a refusal is a tool error carrying the API error body',
  '({status, error, code, vars, details}).',
].join(' ');

/**
 * The MCP server of one HTTP request (stateless: nothing outlives the
 * request): it lists the contract's tools and runs calls through the runner
 * with the request's key.
 */
export function agentServer(tools: readonly ToolDef[], byName: ReadonlyMap<string, ToolDef>, ctx: CallContext, version: string): Server {
  const server = new Server({ name: 'vigil', title: 'Vigil', version }, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((t) => ({ name: t.name, title: t.annotations.title, description: t.description, inputSchema: t.inputSchema as { type: 'object' }, annotations: t.annotations })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return callTool(tool, request.params.arguments ?? {}, ctx);
  });
  return server;
}
