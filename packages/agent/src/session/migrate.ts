/**
 * Session format migrations, applied on load, oldest first, until the
 * document is at `SESSION_FORMAT_VERSION`. Each step is a pure function from
 * one raw version to the next; the caller decodes the result with the current
 * codecs and rewrites the file atomically (keeping the old file beside it).
 *
 * Version 1 (the first release) stored a flat list: a header
 * `{version: 1, id, createdAt, repoId?}`, then one line per message
 * `{role, content, …, timestamp}`, model switches as
 * `{kind: "model", provider, model, timestamp}` and compactions as
 * `{kind: "compaction", summary, firstKeptIndex, timestamp}` — pointing at a
 * line by index. Version 2 is the tree: every entry has `id`/`parentId`, and
 * pointers are entry ids.
 */
import { SESSION_FORMAT_VERSION } from './entries.js';

export interface RawSession {
  readonly header: Record<string, unknown>;
  readonly lines: readonly unknown[];
}

export type MigrationError = { readonly _tag: 'UnsupportedSessionVersion'; readonly version: unknown };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The format version a raw header declares (v2+ headers carry `type: "session"`). */
export function headerVersion(header: Record<string, unknown>): unknown {
  return header.version;
}

function v1ToV2(raw: RawSession): RawSession {
  const ids: string[] = [];
  const lines: unknown[] = [];
  const body = raw.lines.filter(isObject);
  for (let index = 0; index < body.length; index += 1) ids.push(`v1-${index}`);
  body.forEach((line, index) => {
    const base = {
      id: ids[index] as string,
      parentId: index === 0 ? null : (ids[index - 1] as string),
      timestamp: typeof line.timestamp === 'string' ? line.timestamp : new Date(0).toISOString(),
    };
    if (line.kind === 'compaction') {
      const kept = typeof line.firstKeptIndex === 'number' ? ids[line.firstKeptIndex] : undefined;
      lines.push({
        ...base,
        type: 'compaction',
        summary: String(line.summary ?? ''),
        firstKeptEntryId: kept ?? null,
        tokensBefore: typeof line.tokensBefore === 'number' ? line.tokensBefore : 0,
        tokensAfter: typeof line.tokensAfter === 'number' ? line.tokensAfter : 0,
      });
      return;
    }
    if (line.kind === 'model') {
      lines.push({
        ...base,
        type: 'model_change',
        provider: String(line.provider ?? ''),
        model: String(line.model ?? ''),
      });
      return;
    }
    const { timestamp: _timestamp, ...message } = line;
    lines.push({ ...base, type: 'message', message });
  });
  const { version: _version, ...rest } = raw.header;
  return { header: { ...rest, type: 'session', version: 2 }, lines };
}

/** version → the step that lifts a document from it to the next version. */
const STEPS: Readonly<Record<number, (raw: RawSession) => RawSession>> = { 1: v1ToV2 };

/** Lifts `raw` to the current version; `migrated` says whether anything changed. */
export function migrateSession(
  raw: RawSession,
):
  | { readonly ok: true; readonly raw: RawSession; readonly migrated: boolean; readonly from: number }
  | ({ readonly ok: false } & MigrationError) {
  let current = raw;
  const from = headerVersion(raw.header);
  if (typeof from !== 'number' || !Number.isInteger(from) || from < 1 || from > SESSION_FORMAT_VERSION) {
    return { ok: false, _tag: 'UnsupportedSessionVersion', version: from };
  }
  let version = from;
  while (version < SESSION_FORMAT_VERSION) {
    const step = STEPS[version];
    if (step === undefined) return { ok: false, _tag: 'UnsupportedSessionVersion', version };
    current = step(current);
    version += 1;
  }
  return { ok: true, raw: current, migrated: version !== from, from };
}
