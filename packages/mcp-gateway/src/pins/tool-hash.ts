/**
 * The pinned identity of a tool: sha256 over the canonical JSON of its name,
 * description and input schema — the three things a model reads and acts on.
 * A server that changes any of them after approval has a different tool.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

/** What of a tool's definition is pinned. */
export interface PinnedDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: unknown;
}

/** The part of an SDK `Tool` the pin covers (a missing description is the empty string). */
export function pinnedDefinition(tool: {
  readonly name: string;
  readonly description?: string | undefined;
  readonly inputSchema: unknown;
}): PinnedDefinition {
  return { name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema };
}

export const toolHash = (definition: PinnedDefinition): string =>
  createHash('sha256').update(canonicalJson(definition)).digest('hex');
