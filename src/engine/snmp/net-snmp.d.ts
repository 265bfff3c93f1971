// net-snmp ships no TypeScript types: this declares the part of its API the
// snmp check and its tests use, nothing more.
declare module 'net-snmp' {
  import type { EventEmitter } from 'node:events';
  import type { Socket } from 'node:dgram';

  export const Version2c: number;
  export const Version3: number;

  export const ObjectType: {
    Boolean: number; Integer: number; BitString: number; OctetString: number; Null: number; OID: number;
    IpAddress: number; Counter: number; Gauge: number; TimeTicks: number; Opaque: number; Integer32: number;
    Counter32: number; Gauge32: number; Unsigned32: number; Counter64: number;
    NoSuchObject: number; NoSuchInstance: number; EndOfMibView: number;
    [name: string]: number;
  };
  export const SecurityLevel: { noAuthNoPriv: number; authNoPriv: number; authPriv: number };
  export const AuthProtocols: { md5: number; sha: number; sha224: number; sha256: number; sha384: number; sha512: number };
  export const PrivProtocols: { des: number; aes: number; aes256b: number; aes256r: number };
  /** Codes of ResponseInvalidError (EAuthFailure = 5, ...), and their names by number. */
  export const ResponseInvalidCode: Record<string, number> & Record<number, string>;
  export const ErrorStatus: Record<string, number> & Record<number, string>;
  export const MibProviderType: { Scalar: number; Table: number };
  export const MaxAccess: Record<string, number>;
  export const AccessControlModelType: { None: number; Simple: number };

  export interface Varbind { oid: string; type: number; value: unknown }

  export interface User {
    name: string;
    level: number;
    authProtocol?: number;
    authKey?: string;
    privProtocol?: number;
    privKey?: string;
  }

  export interface SessionOptions {
    port?: number;
    retries?: number;
    timeout?: number;
    transport?: 'udp4' | 'udp6';
    version?: number;
    idBitsSize?: 16 | 32;
  }

  export class Session extends EventEmitter {
    get(oids: string[], callback: (error: Error | null, varbinds?: Varbind[]) => void): this;
    close(): this;
  }

  export function createSession(target: string, community: string, options?: SessionOptions): Session;
  export function createV3Session(target: string, user: User, options?: SessionOptions): Session;
  export function isVarbindError(varbind: Varbind): boolean;

  export class RequestFailedError extends Error { status: number }
  export class RequestInvalidError extends Error {}
  export class RequestTimedOutError extends Error {}
  export class ResponseInvalidError extends Error { code: number }

  export interface ScalarProvider {
    name: string;
    type: number;
    oid: string;
    scalarType: number;
    maxAccess: number;
  }

  export interface Mib {
    registerProvider(provider: ScalarProvider): void;
    setScalarValue(name: string, value: unknown): void;
  }

  export interface Authorizer {
    addCommunity(community: string): void;
    addUser(user: User): void;
  }

  export interface AgentOptions {
    port?: number;
    address?: string | null;
    transport?: 'udp4' | 'udp6';
    disableAuthorization?: boolean;
    accessControlModelType?: number;
    engineID?: string;
  }

  export interface Agent {
    getMib(): Mib;
    getAuthorizer(): Authorizer;
    close(callback?: (socket: { address: string; family: string; port: number }) => void): void;
    /** Undocumented, but the only way to watch the listening sockets bind. */
    listener: { sockets: Record<string, Socket> };
  }

  export function createAgent(options: AgentOptions, callback: (error: Error | null, data?: unknown) => void): Agent;
}
