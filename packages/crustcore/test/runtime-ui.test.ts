import { PassThrough } from 'node:stream';
import { makeId, sha256Hex } from '@crustcore/kernel';
import type { ApprovalRequest } from '@crustcore/runtime';
import { hasHiddenCharacters, sanitizeForTerminal } from '@crustcore/runtime';
import { describe, expect, it } from 'vitest';
import type { Io } from '../src/cli/output.js';
import { main } from '../src/main.js';
import { approvalChannel, renderApprovalPrompt } from '../src/render/approval-channel.js';

const plain = {
  bold: (s: string) => s,
  dim: (s: string) => s,
  red: (s: string) => s,
  green: (s: string) => s,
  yellow: (s: string) => s,
  cyan: (s: string) => s,
};

function request(requiresHuman: boolean): ApprovalRequest {
  const patchHash = sha256Hex('p');
  return {
    kind: 'RequestApproval',
    taskId: makeId('TaskId', 'x'),
    approvalId: makeId('ApprovalId', 'y'),
    subject: 'integrate',
    operation: { op: 'integrate', patchHash, treeHash: sha256Hex('t'), baseCommit: 'abc', risks: [] },
    description: `apply verified patch ${patchHash.slice(0, 12)} onto abc`,
    opHash: sha256Hex('op'),
    nonce: 'n',
    expiresAt: 1,
    requiresHuman,
    risks: requiresHuman ? ['tests-weakened'] : [],
  };
}
const context = { goal: 'g', diffText: '+ok\n+\u202Eevil\u001b[2J', files: [], evidence: 'npm test → exit 0' };

describe('terminal text', () => {
  it('shows escapes, bidi overrides and zero-width characters as visible escapes', () => {
    const hostile = 'a\u001b[31mb\u202Ec\u200Bd\u0007e\tf\ng';
    const shown = sanitizeForTerminal(hostile);
    expect(shown).toBe('a\\u{1B}[31mb\\u{202E}c\\u{200B}d\\u{7}e\tf\ng');
    expect(hasHiddenCharacters(hostile)).toBe(true);
    expect(hasHiddenCharacters('plain text\n')).toBe(false);
  });
});

describe('approval channel', () => {
  it('--approve auto answers only what policy lets it; a human-only request is denied without a terminal', async () => {
    const auto = approvalChannel('auto', null);
    expect(await auto.resolve(request(false), context)).toEqual({ decision: 'granted', by: 'policy-auto' });
    expect(await auto.resolve(request(true), context)).toEqual({ decision: 'denied', by: 'human' });
  });

  it('ask takes only an explicit yes; end of input is a denial', async () => {
    for (const [answer, decision] of [
      ['yes\n', 'granted'],
      ['y\n', 'granted'],
      ['no\n', 'denied'],
      ['sure\n', 'denied'],
      ['', 'denied'],
    ] as const) {
      const input = new PassThrough();
      const output = new PassThrough();
      const channel = approvalChannel('ask', { input, output, style: plain });
      const pending = channel.resolve(request(true), context);
      if (answer) input.write(answer);
      input.end();
      expect((await pending).decision, answer).toBe(decision);
    }
  });

  it('a tool call prompt shows the tool and its arguments, sanitized, and asks to allow the call', async () => {
    const toolRequest: ApprovalRequest = {
      ...request(true),
      subject: 'tool',
      operation: { op: 'net.connect', host: 'mcp://files/write_file', port: 0 },
      description: 'connect to mcp://files/write_file:0',
    };
    const toolContext = {
      ...context,
      diffText: null,
      toolCall: { tool: 'mcp__files__write_file', arguments: '{"path":"a\u202Eb","content":"x"}' },
    };
    const text = renderApprovalPrompt(toolRequest, toolContext, plain);
    expect(text).toContain('tool      : mcp__files__write_file');
    expect(text).toContain('arguments : {"path":"a\\u{202E}b","content":"x"}');
    expect(text).not.toContain('\u202E');
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (chunk) => (shown += String(chunk)));
    const pending = approvalChannel('ask', { input, output, style: plain }).resolve(toolRequest, toolContext);
    input.end('yes\n');
    expect((await pending).decision).toBe('granted');
    expect(shown).toContain('Allow this call?');
    expect(shown).not.toContain('Apply?');
  });

  it('the prompt shows the kernel description and a sanitized diff, with a warning', () => {
    const text = renderApprovalPrompt(request(true), context, plain);
    expect(text).toContain('apply verified patch');
    expect(text).toContain('tests-weakened');
    expect(text).toContain('\\u{202E}');
    expect(text).not.toContain('\u202E');
    expect(text).not.toContain('\u001b');
    expect(text).toMatch(/warning/);
  });
});

function fakeIo(): { io: Io; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let o = '';
  let e = '';
  stdout.on('data', (c) => (o += String(c)));
  stderr.on('data', (c) => (e += String(c)));
  const io: Io = { stdout, stderr, stdin: new PassThrough(), env: {}, cwd: process.cwd(), out: plain, err: plain };
  return { io, out: () => o, err: () => e };
}

describe('CLI entry', () => {
  it('--version, --help, unknown commands and usage errors', async () => {
    const a = fakeIo();
    expect(await main(['--version'], a.io)).toBe(0);
    expect(a.out()).toMatch(/^crustcore \d+\.\d+\.\d+/);
    const b = fakeIo();
    expect(await main(['--help'], b.io)).toBe(0);
    expect(b.out()).toContain('demo');
    const c = fakeIo();
    expect(await main(['frobnicate'], c.io)).toBe(2);
    expect(c.err()).toMatch(/unknown command/);
    const d = fakeIo();
    expect(await main(['run', '--bogus'], d.io)).toBe(2);
    expect(d.err()).toMatch(/usage:/);
  });
});
