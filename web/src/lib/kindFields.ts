/**
 * The config fields of each monitor kind, as the contract describes them
 * (CreateMonitorBody.config in openapi.yaml): the form draws them and turns
 * them into the kind's JSON document. `list` is one value per line; `json`
 * takes a JSON value as typed (assertions, OIDs, headers).
 */
import type { Schema } from './api';

/** A kind of the contract: a kind added there fails the web app's type-check until it has its fields here. */
export type MonitorKind = Schema<'CreateMonitorBody'>['kind'];

export interface KindField {
  name: string; label: string; type: 'text' | 'number' | 'select' | 'checkbox' | 'list' | 'json' | 'password';
  required?: boolean; options?: string[]; hint?: string;
}

const ASSERTIONS_HINT = 'JSON list of {"type", "operator", "value", "property"}, e.g. [{"type":"status_code","operator":"lt","value":"400"}].';

export const KIND_FIELDS: Record<MonitorKind, KindField[]> = {
  http: [
    { name: 'url', label: 'URL', type: 'text', required: true, hint: 'http:// or https://' },
    { name: 'method', label: 'Method', type: 'select', options: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] },
    { name: 'timeoutSeconds', label: 'Timeout (seconds)', type: 'number', hint: '1 to 60; default 30.' },
    { name: 'followRedirects', label: 'Follow redirects', type: 'checkbox' },
    { name: 'headers', label: 'Request headers', type: 'json', hint: 'JSON object of strings, e.g. {"Accept":"text/html"}.' },
    { name: 'body', label: 'Request body', type: 'text' },
    { name: 'assertions', label: 'Assertions', type: 'json', hint: `${ASSERTIONS_HINT} Without any, a final 2xx or 3xx passes.` },
  ],
  heartbeat: [
    { name: 'graceSeconds', label: 'Grace (seconds)', type: 'number', hint: 'How late a ping may be beyond the interval; default 300.' },
  ],
  tcp: [
    { name: 'host', label: 'Host', type: 'text', required: true },
    { name: 'port', label: 'Port', type: 'number', required: true, hint: '1 to 65535.' },
  ],
  dns: [
    { name: 'name', label: 'Name to resolve', type: 'text', required: true },
    { name: 'recordType', label: 'Record type', type: 'select', options: ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'TXT', 'SRV', 'CAA', 'PTR', 'SOA'] },
    { name: 'expected', label: 'Expected answers', type: 'list', hint: 'One per line; all must be among the answers. Empty: any answer passes.' },
    { name: 'resolver', label: 'Resolver', type: 'text', hint: 'An IP address, optionally with a port. Default: the service\'s resolvers.' },
  ],
  tls_audit: [
    { name: 'host', label: 'Host', type: 'text', required: true },
    { name: 'port', label: 'Port', type: 'number', hint: 'Default 443.' },
    { name: 'warnDays', label: 'Warn days before expiry', type: 'number', hint: 'Default 14.' },
  ],
  mail_posture: [
    { name: 'domain', label: 'Mail domain', type: 'text', required: true },
    { name: 'dkimSelectors', label: 'DKIM selectors', type: 'list', hint: 'One per line.' },
    { name: 'resolver', label: 'Resolver', type: 'text' },
  ],
  snmp: [
    { name: 'host', label: 'Host', type: 'text', required: true },
    { name: 'port', label: 'Port', type: 'number', hint: 'Default 161.' },
    { name: 'version', label: 'SNMP version', type: 'select', options: ['v2c', 'v3'] },
    { name: 'community', label: 'Community (v2c)', type: 'password' },
    { name: 'username', label: 'User name (v3)', type: 'text' },
    { name: 'securityLevel', label: 'Security level (v3)', type: 'select', options: ['', 'noAuthNoPriv', 'authNoPriv', 'authPriv'] },
    { name: 'authProtocol', label: 'Authentication protocol (v3)', type: 'select', options: ['', 'SHA', 'SHA-256', 'SHA-512', 'MD5'] },
    { name: 'authPassword', label: 'Authentication password (v3)', type: 'password' },
    { name: 'privProtocol', label: 'Privacy protocol (v3)', type: 'select', options: ['', 'AES', 'AES-256', 'DES'] },
    { name: 'privPassword', label: 'Privacy password (v3)', type: 'password' },
    { name: 'oids', label: 'OIDs', type: 'json', required: true, hint: 'JSON list of {"oid", "name", "unit"}, e.g. [{"oid":"1.3.6.1.2.1.1.3.0","name":"uptime","unit":"s"}].' },
    { name: 'assertions', label: 'Assertions', type: 'json', hint: 'JSON list of {"reading", "operator", "value"}.' },
  ],
  agent: [
    { name: 'agentId', label: 'Agent', type: 'text', required: true, hint: 'The agent\'s id (agt_…).' },
    { name: 'metric', label: 'Metric', type: 'select', options: ['', 'cpuPercent', 'memoryPercent', 'memoryUsedBytes', 'swapPercent', 'diskPercent', 'load1', 'load5', 'load15', 'networkRxBytesPerSecond', 'networkTxBytesPerSecond'] },
    { name: 'operator', label: 'Operator', type: 'select', options: ['', 'gt', 'gte', 'lt', 'lte'] },
    { name: 'threshold', label: 'Threshold', type: 'number' },
    { name: 'warning', label: 'Warning', type: 'number' },
    { name: 'mount', label: 'Mount (disk only)', type: 'text' },
    { name: 'missedReports', label: 'Missed reports before down', type: 'number', hint: '1 to 100; default 3.' },
  ],
};

/** Form values of a kind as its config document; a JSON field that does not parse is reported by name. */
export function toConfig(kind: string, values: Record<string, string | boolean>): { config: Record<string, unknown>; bad: string | null } {
  const config: Record<string, unknown> = {};
  for (const f of KIND_FIELDS[kind as MonitorKind] ?? []) {
    const v = values[f.name];
    if (f.type === 'checkbox') { if (typeof v === 'boolean') config[f.name] = v; continue; }
    if (typeof v !== 'string' || v.trim() === '') continue;
    if (f.type === 'number') config[f.name] = Number(v);
    else if (f.type === 'list') config[f.name] = v.split('\n').map((s) => s.trim()).filter(Boolean);
    else if (f.type === 'json') {
      try { config[f.name] = JSON.parse(v); } catch { return { config, bad: f.name }; }
    } else config[f.name] = v;
  }
  return { config, bad: null };
}
