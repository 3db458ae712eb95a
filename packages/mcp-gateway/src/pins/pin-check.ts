/**
 * Trust on first use: a live tool is callable only when a person approved
 * exactly this definition. A tool with no pin is `unapproved`; one whose
 * hash differs from its pin is `changed` and carries the diff a person needs
 * to decide; `deny` in the pin's policy hides it.
 */
import type { ServerRecord, ToolPolicy } from '../registry/server-record.js';
import { canonicalJson } from './canonical-json.js';
import { type PinnedDefinition, pinnedDefinition, toolHash } from './tool-hash.js';

/** A tool as the server lists it (the fields the gateway uses). */
export interface LiveTool {
  readonly name: string;
  readonly description?: string | undefined;
  readonly inputSchema: unknown;
  readonly annotations?: { readonly readOnlyHint?: boolean | undefined } | undefined;
}

export type PinStatus =
  | { readonly kind: 'approved'; readonly policy: ToolPolicy; readonly readOnly: boolean }
  | { readonly kind: 'unapproved'; readonly hash: string }
  | { readonly kind: 'changed'; readonly hash: string; readonly diff: string };

export interface CheckedTool {
  readonly tool: LiveTool;
  readonly definition: PinnedDefinition;
  /** The live definition's hash (computed once per listing, not per call). */
  readonly hash: string;
  readonly status: PinStatus;
}

/** Read-only only when the server says so AND the person's policy allows the tool outright. */
const isReadOnly = (tool: LiveTool, policy: ToolPolicy): boolean =>
  policy === 'allow' && tool.annotations?.readOnlyHint === true;

/** Checks a live tool against the record's pin; `known` re-checks an earlier result against newer pins. */
export function checkTool(record: ServerRecord, tool: LiveTool, known?: CheckedTool): CheckedTool {
  const definition = known?.definition ?? pinnedDefinition(tool);
  const hash = known?.hash ?? toolHash(definition);
  const pin = Object.hasOwn(record.tools, tool.name) ? record.tools[tool.name] : undefined;
  if (pin === undefined) return { tool, definition, hash, status: { kind: 'unapproved', hash } };
  if (pin.hash !== hash) {
    const diff = definitionDiff(pin.definition, definition);
    return { tool, definition, hash, status: { kind: 'changed', hash, diff } };
  }
  const status: PinStatus = { kind: 'approved', policy: pin.policy, readOnly: isReadOnly(tool, pin.policy) };
  return { tool, definition, hash, status };
}

/**
 * Whether a listed tool is still exactly what a person approved in `record`: the re-check every call
 * makes. The same test as checkTool's `approved` (a pin of that name with the listing's hash), without
 * building a result; the hash is the listing's, so a changed definition has to come with a new
 * listing (tools/list_changed), and a new listing is hashed again.
 */
export function approvedNow(record: ServerRecord, listed: CheckedTool): boolean {
  const name = listed.tool.name;
  const pin = Object.hasOwn(record.tools, name) ? record.tools[name] : undefined;
  return pin !== undefined && pin.hash === listed.hash;
}

/** Field-by-field diff of two definitions, one `-`/`+` pair per changed field. */
export function definitionDiff(before: unknown, after: PinnedDefinition): string {
  const old = (typeof before === 'object' && before !== null ? before : {}) as Record<string, unknown>;
  const lines: string[] = [];
  for (const field of ['name', 'description', 'inputSchema'] as const) {
    const was = canonicalJson(old[field] ?? null);
    const now = canonicalJson(after[field] ?? null);
    if (was !== now) lines.push(`${field}:`, `- ${was}`, `+ ${now}`);
  }
  return lines.join('\n');
}

/** The record with these tools pinned as approved (the person's decision), keeping other pins. */
export function approveTools(
  record: ServerRecord,
  tools: readonly LiveTool[],
  policyFor: (tool: LiveTool) => ToolPolicy = () => record.defaultPolicy,
): ServerRecord {
  const pins = { ...record.tools };
  for (const tool of tools) {
    const definition = pinnedDefinition(tool);
    const kept = Object.hasOwn(pins, tool.name) ? pins[tool.name]?.policy : undefined;
    pins[tool.name] = { hash: toolHash(definition), policy: kept ?? policyFor(tool), definition };
  }
  return { ...record, tools: pins, trust: 'trusted' };
}
