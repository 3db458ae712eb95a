/**
 * The kernel's vocabulary as io-ts codecs: operations, policy rules, risk
 * profiles, actors. The TypeScript types (`Operation`, `PolicyRule`, …) are
 * derived from these codecs, so the decoder and the type cannot drift apart.
 */
import * as t from 'io-ts';
import { boundedString, Hash32C, NonNegativeInt } from './codecs.js';

export const MAX_NAME = 200;
export const MAX_LIST = 256;
export const MAX_ARGV = 256;

export const Name = boundedString(MAX_NAME);
export const PathText = boundedString(4_096);

export const boundedArray = <C extends t.Mixed>(codec: C, max: number) =>
  t.refinement(t.readonlyArray(codec), (a) => a.length <= max, `array(<=${max})`);

export const RiskProfileC = t.keyof({ readonly: null, supervised: null, full: null });
export const ApprovalModeC = t.keyof({ auto: null, ask: null, deny: null });
export const ActorC = t.keyof({ agent: null, subagent: null, worker: null, runtime: null });
export const DecisionC = t.keyof({ allow: null, ask: null, deny: null });
export const ApprovedByC = t.keyof({ human: null, 'policy-auto': null });

export const PolicyRuleC = t.intersection([
  t.type({
    decision: DecisionC,
    op: t.keyof({
      'fs.read': null,
      'fs.write': null,
      'fs.delete': null,
      exec: null,
      'net.connect': null,
      integrate: null,
      'git.commit': null,
      'git.push': null,
      'package.install': null,
      'secret.use': null,
      'subagent.spawn': null,
      'message.user': null,
      github: null,
    }),
  }),
  t.partial({ match: Name }),
]);

export const OperationC = t.union([
  t.type({ op: t.literal('fs.read'), path: PathText }),
  t.type({ op: t.literal('fs.write'), path: PathText }),
  t.type({ op: t.literal('fs.delete'), path: PathText }),
  t.type({
    op: t.literal('exec'),
    argv: boundedArray(PathText, MAX_ARGV),
    cwd: PathText,
    profile: Name,
    recognizedRunner: t.boolean,
  }),
  t.type({ op: t.literal('net.connect'), host: Name, port: NonNegativeInt }),
  t.type({
    op: t.literal('integrate'),
    patchHash: Hash32C,
    treeHash: Hash32C,
    baseCommit: Name,
    risks: boundedArray(Name, MAX_LIST),
  }),
  t.type({ op: t.literal('git.commit'), branch: Name }),
  t.type({ op: t.literal('git.push'), remote: Name, branch: Name, force: t.boolean }),
  t.type({ op: t.literal('package.install'), manager: Name, packages: boundedArray(Name, MAX_LIST) }),
  t.type({ op: t.literal('secret.use'), handle: Name }),
  t.type({ op: t.literal('subagent.spawn'), role: Name }),
  t.type({ op: t.literal('message.user'), channel: Name }),
  t.type({ op: t.literal('github'), action: Name, repo: Name }),
]);

export type RiskProfile = t.TypeOf<typeof RiskProfileC>;
export type ApprovalMode = t.TypeOf<typeof ApprovalModeC>;
export type Actor = t.TypeOf<typeof ActorC>;
export type Decision = t.TypeOf<typeof DecisionC>;
export type ApprovedBy = t.TypeOf<typeof ApprovedByC>;
/** One standing rule: exact match on exec argv[0], a path prefix for fs ops, or a host for net. */
export type PolicyRule = Readonly<t.TypeOf<typeof PolicyRuleC>>;
/** What a tool call, worker or integration proposes to do, as data. */
export type Operation = Readonly<t.TypeOf<typeof OperationC>>;
export type OperationName = Operation['op'];
