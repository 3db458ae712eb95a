/**
 * The admin socket protocol: one JSON object per line each way. Requests are
 * decoded with io-ts; anything that is not JSON, not a known request, or too
 * long gets an error reply on the same connection — the server never crashes
 * and never closes a connection over bad input.
 *
 *   → {"op":"status","requestId":1}
 *   ← {"ok":true,"requestId":1,"result":{…}}
 *   ← {"ok":false,"requestId":1,"error":{"code":"bad-request","message":"…"}}
 */
import type { Json } from '@crustcore/kernel';
import * as t from 'io-ts';
import { describeDecodeErrors } from './decode-errors.js';
import { TaskJobPayloadC } from './task-job.js';

export const ADMIN_LIMITS = {
  /** One request line; an enqueue with a long goal fits easily. */
  maxRequestBytes: 256 * 1024,
  /** One reply line (task lists, diffs for approval are bounded before this). */
  maxReplyBytes: 4 * 1024 * 1024,
  maxConnections: 32,
  idleTimeoutMs: 60_000,
  maxIdBytes: 128,
} as const;

const IdString = new t.Type<string, string, unknown>(
  'Id',
  (u): u is string => typeof u === 'string',
  (u, c) =>
    typeof u === 'string' && u.length > 0 && Buffer.byteLength(u) <= ADMIN_LIMITS.maxIdBytes && /^[\w:.-]+$/.test(u)
      ? t.success(u)
      : t.failure(u, c, 'expected an id ([A-Za-z0-9_:.-], at most 128 bytes)'),
  t.identity,
);

const RequestIdC = t.union([t.string, t.number]);
const withRequestId = <P extends t.Props>(props: P) =>
  t.intersection([t.type(props), t.partial({ requestId: RequestIdC })]);

const LimitC = new t.Type<number, number, unknown>(
  'Limit',
  (u): u is number => typeof u === 'number',
  (u, c) =>
    typeof u === 'number' && Number.isSafeInteger(u) && u >= 1 && u <= 1000
      ? t.success(u)
      : t.failure(u, c, 'expected 1..1000'),
  t.identity,
);

export const AdminRequestC = t.union([
  withRequestId({ op: t.literal('status') }),
  t.intersection([withRequestId({ op: t.literal('tasks') }), t.partial({ limit: LimitC })]),
  withRequestId({ op: t.literal('enqueue'), task: TaskJobPayloadC }),
  withRequestId({ op: t.literal('pause') }),
  withRequestId({ op: t.literal('resume') }),
  withRequestId({ op: t.literal('cancel'), id: IdString }),
  withRequestId({ op: t.literal('kill'), id: IdString }),
  withRequestId({ op: t.literal('approvals') }),
  withRequestId({ op: t.literal('approve'), id: IdString, approvalId: IdString, opHash: IdString }),
  t.intersection([withRequestId({ op: t.literal('deny'), id: IdString }), t.partial({ approvalId: IdString })]),
  withRequestId({ op: t.literal('mcp-describe'), taskId: IdString }),
  withRequestId({ op: t.literal('mcp-token'), taskId: IdString }),
]);
export type AdminRequest = t.TypeOf<typeof AdminRequestC>;
export type AdminOp = AdminRequest['op'];

export const ADMIN_ERROR_CODES = [
  'bad-json',
  'bad-request',
  'too-large',
  'unsupported',
  'not-found',
  'conflict',
  'refused',
  'internal',
] as const;
export type AdminErrorCode = (typeof ADMIN_ERROR_CODES)[number];

export interface AdminError {
  readonly code: AdminErrorCode;
  readonly message: string;
}

export type AdminReply =
  | { readonly ok: true; readonly requestId?: string | number; readonly result: Json }
  | { readonly ok: false; readonly requestId?: string | number; readonly error: AdminError };

export const adminOk = (result: Json): AdminReply => ({ ok: true, result });
export const adminError = (code: AdminErrorCode, message: string): AdminReply => ({
  ok: false,
  error: { code, message },
});

const OP_NAMES = new Set<string>([
  'status',
  'tasks',
  'enqueue',
  'pause',
  'resume',
  'cancel',
  'kill',
  'approvals',
  'approve',
  'deny',
  'mcp-describe',
  'mcp-token',
]);

/** Parses and decodes one request line. */
export function decodeAdminRequest(
  line: string,
): { readonly _tag: 'Right'; readonly right: AdminRequest } | { readonly _tag: 'Left'; readonly left: AdminReply } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { _tag: 'Left', left: adminError('bad-json', 'the request line is not JSON') };
  }
  const requestId =
    typeof value === 'object' && value !== null && 'requestId' in value
      ? (value as { requestId: unknown }).requestId
      : undefined;
  const echo =
    typeof requestId === 'string' || typeof requestId === 'number'
      ? { requestId: typeof requestId === 'string' ? requestId.slice(0, 128) : requestId }
      : {};
  const op = typeof value === 'object' && value !== null ? (value as { op?: unknown }).op : undefined;
  if (typeof op !== 'string' || !OP_NAMES.has(op)) {
    return {
      _tag: 'Left',
      left: { ...adminError('bad-request', `unknown op; expected one of ${[...OP_NAMES].join(', ')}`), ...echo },
    };
  }
  const decoded = AdminRequestC.decode(value);
  if (decoded._tag === 'Left') {
    // A union reports every branch; keep the ones about the op that was named.
    const relevant = decoded.left.filter((e) => e.context.some((entry) => entry.key === 'op') === false);
    const problems = describeDecodeErrors(relevant.length > 0 ? relevant : decoded.left);
    return { _tag: 'Left', left: { ...adminError('bad-request', `${op}: ${problems.join('; ')}`), ...echo } };
  }
  return decoded;
}

/** Serializes a reply as one line; a reply over the bound becomes an error reply. */
export function encodeAdminReply(reply: AdminReply): string {
  const line = JSON.stringify(reply);
  if (Buffer.byteLength(line, 'utf8') <= ADMIN_LIMITS.maxReplyBytes) return `${line}\n`;
  const requestId = reply.requestId === undefined ? {} : { requestId: reply.requestId };
  return `${JSON.stringify({ ...adminError('too-large', 'the reply is larger than the admin limit; ask for less (limit)'), ...requestId })}\n`;
}

const AdminReplyC = t.union([
  t.intersection([t.type({ ok: t.literal(true), result: t.unknown }), t.partial({ requestId: RequestIdC })]),
  t.intersection([
    t.type({ ok: t.literal(false), error: t.type({ code: t.string, message: t.string }) }),
    t.partial({ requestId: RequestIdC }),
  ]),
]);

/** Client side: decodes a reply line (the server is local, but still a process boundary). */
export function decodeAdminReply(line: string): AdminReply | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  const decoded = AdminReplyC.decode(value);
  if (decoded._tag === 'Left') return null;
  const reply = decoded.right;
  if (reply.ok)
    return {
      ok: true,
      result: reply.result as Json,
      ...(reply.requestId === undefined ? {} : { requestId: reply.requestId }),
    };
  const code = (ADMIN_ERROR_CODES as readonly string[]).includes(reply.error.code)
    ? (reply.error.code as AdminErrorCode)
    : 'internal';
  return {
    ok: false,
    error: { code, message: reply.error.message },
    ...(reply.requestId === undefined ? {} : { requestId: reply.requestId }),
  };
}
