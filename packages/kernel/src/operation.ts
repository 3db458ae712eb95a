/**
 * Operations: what a tool call, worker or integration proposes to do,
 * described as data so it can be hashed, approved and replayed. An approval is
 * bound to `operationHash(op)`; change one field and it no longer matches.
 */
import { hashJson, type Json } from './hash.js';
import type { Hash32 } from './ids.js';
import type { Operation, OperationName } from './schema.js';

export type { Operation, OperationName } from './schema.js';

export const OPERATION_NAMES: readonly OperationName[] = [
  'fs.read',
  'fs.write',
  'fs.delete',
  'exec',
  'net.connect',
  'integrate',
  'git.commit',
  'git.push',
  'package.install',
  'secret.use',
  'subagent.spawn',
  'message.user',
  'github',
];

export type Reversibility = 'Reversible' | 'ReversibleWithCleanup' | 'Irreversible' | 'Destructive';

/** Reversibility class per operation; `git.push --force` is destructive. */
export function reversibilityOf(op: Operation): Reversibility {
  switch (op.op) {
    case 'fs.read':
    case 'fs.write':
    case 'fs.delete':
    case 'exec':
    case 'subagent.spawn':
      return 'Reversible';
    case 'integrate':
    case 'git.commit':
    case 'package.install':
      return 'ReversibleWithCleanup';
    case 'git.push':
      return op.force ? 'Destructive' : 'Irreversible';
    case 'net.connect':
    case 'secret.use':
    case 'message.user':
    case 'github':
      return 'Irreversible';
  }
}

export const operationHash = (op: Operation): Hash32 => hashJson(op as unknown as Json);

/** A short, kernel-written description of an operation for approval prompts. */
export function describeOperation(op: Operation): string {
  switch (op.op) {
    case 'fs.read':
    case 'fs.write':
    case 'fs.delete':
      return `${op.op} ${JSON.stringify(op.path)}`;
    case 'exec':
      return `run ${JSON.stringify(op.argv)} in ${op.profile} sandbox (cwd ${JSON.stringify(op.cwd)})`;
    case 'net.connect':
      return `connect to ${op.host}:${op.port}`;
    case 'integrate':
      return `apply verified patch ${op.patchHash.slice(0, 12)} onto ${op.baseCommit.slice(0, 12)}${op.risks.length ? ` (risks: ${op.risks.join(', ')})` : ''}`;
    case 'git.commit':
      return `commit to branch ${JSON.stringify(op.branch)}`;
    case 'git.push':
      return `${op.force ? 'FORCE-' : ''}push ${JSON.stringify(op.branch)} to ${JSON.stringify(op.remote)}`;
    case 'package.install':
      return `install ${op.packages.join(' ')} with ${op.manager}`;
    case 'secret.use':
      return `use secret ${op.handle}`;
    case 'subagent.spawn':
      return `spawn ${op.role} subagent`;
    case 'message.user':
      return `message the user on ${op.channel}`;
    case 'github':
      return `GitHub ${op.action} on ${op.repo}`;
  }
}
