/**
 * What the parts of `crustcore chat` share: its options, its REPL state and
 * the context each handler receives (chat.ts runs the REPL, chat-commands.ts
 * answers the slash commands).
 */
import type { parseArgs } from 'node:util';
import type { AgentEvent } from '@crustcore/agent';
import type { ApprovalChannel } from '@crustcore/runtime';
import type { Argv } from '@crustcore/verify';
import type { ExitCode } from '../cli/exit-codes.js';
import type { Io } from '../cli/output.js';

export const HELP = [
  'Type a request and press Enter. While the agent works:',
  '  !text        steer it now (before its next pending action)',
  '  text         queue the next request',
  '  Ctrl+C       type a steering line; Ctrl+C twice exits',
  'Commands:',
  '  /models [PROVIDER/MODEL]   list models, or switch for the next request',
  '  /branch [N]                show the conversation, or rewind it to entry N',
  '  /resume [ID|latest]        list sessions, or continue one',
  '  /sessions                  list sessions of this repository',
  '  /exit                      quit',
].join('\n');

export type AgentPack = typeof import('@crustcore/agent');

export interface ChatState {
  model: string | undefined;
  sessionId: string | undefined;
  /** Commit mode: the branch the next request starts from. */
  ref: string | undefined;
  /**
   * Commit mode: which branch the code was on after each request, by the id of
   * the request's last session entry, so rewinding the conversation rewinds
   * the code the next request starts from too.
   */
  readonly refAfterEntry: Map<string, string | undefined>;
  running: AbortController | null;
  steerNext: boolean;
  lastInterruptMs: number;
  readonly steering: string[];
  readonly queue: string[];
  pendingAnswer: ((line: string | null) => void) | null;
  totals: { inputTokens: number; outputTokens: number; costMicros: number };
}

export const CHAT_OPTIONS = {
  dir: { type: 'string' },
  verify: { type: 'string' },
  model: { type: 'string' },
  'models-config': { type: 'string' },
  replay: { type: 'string' },
  resume: { type: 'string' },
  approve: { type: 'string' },
  thinking: { type: 'string' },
  apply: { type: 'boolean', default: false },
  'no-memory': { type: 'boolean' },
  'database-url': { type: 'string' },
} as const;

export type ChatValues = ReturnType<typeof parseArgs<{ options: typeof CHAT_OPTIONS }>>['values'];
export type SessionStore = ReturnType<AgentPack['SessionStore']['forRepository']>;

/** Everything one chat shares: the parsed options, the loaded agent pack, the session store, the REPL state. */
export interface ChatContext {
  readonly io: Io;
  readonly values: ChatValues;
  readonly approve: 'auto' | 'ask' | 'deny';
  readonly dir: string;
  readonly verifyArgv: Argv;
  /** The verify command was typed or is in the user's config (not the repository's suggestion). */
  readonly verifyFromUser: boolean;
  readonly home: string;
  readonly agent: AgentPack;
  readonly store: SessionStore;
  readonly state: ChatState;
  readonly interactive: boolean;
  readonly approvals: ApprovalChannel;
  readonly printEvent: (event: AgentEvent) => void;
  isClosed(): boolean;
  prompt(): void;
  exit(code: ExitCode): void;
}
