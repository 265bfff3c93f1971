import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** An MCP client (the SDK's own) connected to the agent server at `{baseUrl}/mcp` with `key` as its bearer. */
export async function connectAgent(baseUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: 'vigil-test-agent', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  return client;
}

/** Calls a tool; `body` is the JSON of its first text content (the REST answer, or the error body with its status). */
export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult & { body: any }> {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = (res.content[0] as { type: string; text?: string }).text ?? '';
  return { ...res, body: JSON.parse(text) };
}
