/**
 * From an MCP `CallToolResult` to what the model may see: every content item
 * rendered as text (binary items by size only), redacted, cut to the bound
 * with a handle to the full redacted result (stored as an artifact by the
 * runtime), and wrapped as untrusted data — a server's text is never an
 * instruction.
 */
import { createHash } from 'node:crypto';
import type { Redactor } from '@crustcore/secrets';

export interface ShapeOptions {
  readonly source: string;
  readonly maxChars: number;
  /** The task's redactor itself, not a closure over it: one less function made per call. */
  readonly redactor: Pick<Redactor, 'redactText'>;
  readonly wrap: (source: string, text: string) => string;
}

export interface ShapedResult {
  readonly text: string;
  readonly ok: boolean;
  readonly outputBytes: number;
  readonly artifacts: readonly Uint8Array[];
  /** `sha256:HEX` of the stored full result when the text was cut, else null. */
  readonly handle: string | null;
}

function renderItem(item: unknown): string {
  if (typeof item !== 'object' || item === null) return '[unreadable content item]';
  const entry = item as Record<string, unknown>;
  switch (entry.type) {
    case 'text':
      return typeof entry.text === 'string' ? entry.text : '';
    case 'image':
    case 'audio':
      return `[${entry.type} ${String(entry.mimeType ?? '?')}, ${typeof entry.data === 'string' ? entry.data.length : 0} base64 characters, not shown]`;
    case 'resource': {
      const resource = (entry.resource ?? {}) as Record<string, unknown>;
      return typeof resource.text === 'string' ? resource.text : `[resource ${String(resource.uri ?? '?')}, not shown]`;
    }
    case 'resource_link':
      return `[link ${String(entry.uri ?? '?')}]`;
    default:
      return `[content of type ${JSON.stringify(String(entry.type)).slice(0, 40)}]`;
  }
}

/** The whole result as one text: content items, then structured content when there is no text. */
export function renderResult(result: Record<string, unknown>): string {
  const items = Array.isArray(result.content) ? result.content : [];
  // The common answer, one text item: its text as it is (what the general path below makes of it too).
  if (items.length === 1 && result.structuredContent === undefined) return renderItem(items[0]);
  const parts = items.map(renderItem);
  if (result.structuredContent !== undefined && parts.every((part) => part.trim() === ''))
    parts.push(JSON.stringify(result.structuredContent));
  return parts.join('\n');
}

export function shapeResult(result: Record<string, unknown>, options: ShapeOptions): ShapedResult {
  const full = options.redactor.redactText(renderResult(result));
  const ok = result.isError !== true;
  const outputBytes = Buffer.byteLength(full);
  if (full.length <= options.maxChars) {
    return { text: options.wrap(options.source, full), ok, outputBytes, artifacts: [], handle: null };
  }
  const bytes = new TextEncoder().encode(full);
  const handle = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  const cut = `${full.slice(0, options.maxChars)}\n[CrustCore: result cut at ${options.maxChars} of ${full.length} characters; the full (redacted) result is stored as artifact ${handle}]`;
  return { text: options.wrap(options.source, cut), ok, outputBytes, artifacts: [bytes], handle };
}
