/**
 * glob and grep over confine's walkers: bounded, no symlink followed, run
 * inside the worktree gate so a sandboxed process cannot swap directories
 * under them. Matched lines are file content: wrapped as untrusted data.
 */
import { type ConfinedReadPath, glob, resolveReadPath, search } from '@crustcore/confine';
import type * as t from 'io-ts';
import { wrapUntrusted } from '../context/untrusted.js';
import type { GlobArgs, GrepArgs } from './tool-args.js';
import { execution, type ToolPlan } from './tool-plan.js';
import { type AgentWorkspace, describePathError } from './workspace.js';

/** A pattern that names a place outside the root is refused before anything runs. */
export function planGlob(workspace: AgentWorkspace, args: t.TypeOf<typeof GlobArgs>): ToolPlan | string {
  if (args.pattern.startsWith('/') || args.pattern.split('/').includes('..')) {
    return 'DENIED: glob patterns are relative to the repository root and may not contain ".."';
  }
  return {
    operation: { op: 'fs.read', path: args.pattern },
    reads: null,
    writes: null,
    mutates: false,
    execute: async (signal) => {
      const gated = await workspace.gate.withToolWrite(
        () => {
          const found = glob(workspace.readCap, args.pattern, { maxResults: args.maxResults ?? 200 });
          if (found._tag === 'Left') {
            const error = found.left;
            return execution(
              error._tag === 'InvalidGlob' ? `invalid pattern: ${error.message}` : describePathError(error),
              false,
            );
          }
          const { matches, truncated } = found.right;
          if (matches.length === 0) return execution(`no paths match ${args.pattern}`, true);
          const listing = matches.map((m) => (m.kind === 'directory' ? `${m.path}/` : m.path)).join('\n');
          const note = truncated ? '\n(more matches were cut off; narrow the pattern)' : '';
          return execution(
            `${matches.length} match(es)${note}\n${wrapUntrusted(`glob ${args.pattern}`, workspace.scrub(listing))}`,
            true,
          );
        },
        { signal },
      );
      return gated._tag === 'Right' ? gated.right : execution(`not run: ${gated.left.message}`, false);
    },
  };
}

export function planGrep(workspace: AgentWorkspace, args: t.TypeOf<typeof GrepArgs>): ToolPlan {
  const where = args.path === undefined ? '.' : workspace.operationPath(args.path);
  return {
    operation: { op: 'fs.read', path: where },
    reads: null,
    writes: null,
    mutates: false,
    execute: async (signal) => {
      const gated = await workspace.gate.withToolWrite(
        async () => {
          let path: ConfinedReadPath | null = null;
          if (args.path !== undefined) {
            const resolved = resolveReadPath(workspace.readCap, args.path);
            if (resolved._tag === 'Left') return execution(describePathError(resolved.left), false);
            path = resolved.right;
          }
          const found = await search(workspace.readCap, {
            pattern: args.pattern,
            maxMatches: args.maxMatches ?? 100,
            signal,
            ...(path === null ? {} : { path }),
            ...(args.glob === undefined ? {} : { glob: args.glob }),
            ...(args.fixedStrings === undefined ? {} : { fixedStrings: args.fixedStrings }),
            ...(args.caseInsensitive === undefined ? {} : { caseInsensitive: args.caseInsensitive }),
          });
          if (found._tag === 'Left') {
            const error = found.left;
            switch (error._tag) {
              case 'InvalidPattern':
              case 'InvalidGlob':
              case 'SearchFailed':
                return execution(`${error._tag}: ${error.message}`, false);
              default:
                return execution(describePathError(error), false);
            }
          }
          const { matches, truncated } = found.right;
          if (matches.length === 0) return execution(`no matches for ${JSON.stringify(args.pattern)}`, true);
          const lines = matches.map((m) => `${m.path}:${m.lineNumber}: ${m.text}`).join('\n');
          const note = truncated ? '\n(more matches were cut off; narrow the search)' : '';
          return execution(
            `${matches.length} matching line(s)${note}\n${wrapUntrusted(`grep ${args.pattern}`, workspace.scrub(lines))}`,
            true,
          );
        },
        { signal },
      );
      return gated._tag === 'Right' ? gated.right : execution(`not run: ${gated.left.message}`, false);
    },
  };
}
