/**
 * Policy: allow / ask / deny per proposed operation, with a reason.
 *
 * Order of evaluation (first match decides, except that deny always wins):
 *   1. any matching deny rule → deny;
 *   2. the actor limits (subagents only read);
 *   3. the profile's base decision for the operation;
 *   4. allow rules may lift `ask` to `allow` for Reversible operations only —
 *      never past a deny, never for irreversible or destructive work;
 *   5. `ask` becomes `deny` when no human can be asked.
 */
import { type Reversibility, reversibilityOf } from './operation.js';
import type { Actor, Decision, Operation, OperationName, PolicyRule, RiskProfile } from './schema.js';

export type { Actor, Decision, PolicyRule, RiskProfile } from './schema.js';

export interface PolicySnapshot {
  readonly profile: RiskProfile;
  readonly rules: readonly PolicyRule[];
  /** False when nobody can answer an approval (headless, no TTY): ask → deny. */
  readonly canAsk: boolean;
}

export interface PolicyVerdict {
  readonly decision: Decision;
  readonly reason: string;
  readonly reversibility: Reversibility;
}

const BASE: Readonly<Record<RiskProfile, Readonly<Record<OperationName, Decision>>>> = {
  readonly: {
    'fs.read': 'allow',
    'fs.write': 'deny',
    'fs.delete': 'deny',
    exec: 'deny',
    'net.connect': 'deny',
    integrate: 'deny',
    'git.commit': 'deny',
    'git.push': 'deny',
    'package.install': 'deny',
    'secret.use': 'deny',
    'subagent.spawn': 'allow',
    'message.user': 'deny',
    github: 'deny',
  },
  supervised: {
    'fs.read': 'allow',
    'fs.write': 'allow',
    'fs.delete': 'ask',
    exec: 'ask',
    'net.connect': 'ask',
    integrate: 'ask',
    'git.commit': 'ask',
    'git.push': 'ask',
    'package.install': 'ask',
    'secret.use': 'ask',
    'subagent.spawn': 'allow',
    'message.user': 'deny',
    github: 'ask',
  },
  full: {
    'fs.read': 'allow',
    'fs.write': 'allow',
    'fs.delete': 'allow',
    exec: 'allow',
    'net.connect': 'ask',
    integrate: 'ask',
    'git.commit': 'allow',
    'git.push': 'ask',
    'package.install': 'ask',
    'secret.use': 'ask',
    'subagent.spawn': 'allow',
    'message.user': 'deny',
    github: 'ask',
  },
};

const SUBAGENT_OPS: ReadonlySet<OperationName> = new Set(['fs.read']);

function ruleMatches(rule: PolicyRule, op: Operation): boolean {
  if (rule.op !== op.op) return false;
  if (rule.match === undefined) return true;
  switch (op.op) {
    case 'exec':
      return op.argv[0] === rule.match;
    case 'fs.read':
    case 'fs.write':
    case 'fs.delete':
      return op.path === rule.match || op.path.startsWith(rule.match.endsWith('/') ? rule.match : `${rule.match}/`);
    case 'net.connect':
      return op.host === rule.match;
    case 'package.install':
      return op.manager === rule.match;
    case 'secret.use':
      return op.handle === rule.match;
    default:
      return false;
  }
}

export function decide(policy: PolicySnapshot, op: Operation, actor: Actor): PolicyVerdict {
  const reversibility = reversibilityOf(op);
  const verdict = (decision: Decision, reason: string): PolicyVerdict => ({ decision, reason, reversibility });

  for (const rule of policy.rules) {
    if (rule.decision === 'deny' && ruleMatches(rule, op))
      return verdict('deny', `denied by rule ${rule.op}${rule.match ? ` ${rule.match}` : ''}`);
  }
  if (actor === 'subagent' && !SUBAGENT_OPS.has(op.op)) return verdict('deny', 'subagents may only read');
  if (op.op === 'message.user') return verdict('deny', 'only the supervisor talks to the user');

  let decision = BASE[policy.profile][op.op];
  let reason = `${policy.profile} profile: ${decision} ${op.op}`;
  if (decision === 'ask' && op.op === 'exec' && op.recognizedRunner && policy.profile !== 'readonly') {
    decision = 'allow';
    reason = `${policy.profile} profile: recognized test runner`;
  }
  for (const rule of policy.rules) {
    if (rule.decision === 'ask' && decision === 'allow' && ruleMatches(rule, op)) {
      decision = 'ask';
      reason = `ask by rule ${rule.op}${rule.match ? ` ${rule.match}` : ''}`;
    }
  }
  if (decision === 'ask' && reversibility === 'Reversible') {
    for (const rule of policy.rules) {
      if (
        rule.decision === 'allow' &&
        ruleMatches(rule, op) &&
        !policy.rules.some((r) => r.decision === 'ask' && ruleMatches(r, op))
      ) {
        decision = 'allow';
        reason = `allowed by rule ${rule.op}${rule.match ? ` ${rule.match}` : ''}`;
        break;
      }
    }
  }
  if (decision === 'allow' && (reversibility === 'Irreversible' || reversibility === 'Destructive')) {
    decision = 'ask';
    reason = `${reversibility.toLowerCase()} operations always need approval`;
  }
  if (decision === 'ask' && !policy.canAsk) return verdict('deny', `${reason}; no one can be asked, so denied`);
  return verdict(decision, reason);
}
