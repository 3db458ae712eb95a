/**
 * The chat REPL in a real terminal (tmux), against a scripted model server:
 * streamed text, tool-call lines, inline approvals showing the kernel's
 * description, a verified change committed on a branch, `!` steering before
 * a pending action, a second request building on the first, /models and
 * /branch, and Ctrl+C twice to exit.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CALC_REPO, makeBox } from './agent/harness.js';
import { type ModelServer, registryFor, startModelServer } from './agent/model-server.js';
import { buildCli, CLI } from './cli-harness.js';
import { framesOf, ledgerDirOf } from './mcp-harness.js';

const REPO_ROOT = resolve(import.meta.dirname, '..');
beforeAll(() => buildCli(), 60_000);
const tmux = (...args: string[]): string => execFileSync('tmux', args, { encoding: 'utf8' });
const screen = (session: string): string => tmux('capture-pane', '-p', '-J', '-S', '-400', '-t', session);

async function waitFor(session: string, pattern: RegExp, timeoutMs = 60_000, count = 1): Promise<string> {
  const started = Date.now();
  for (;;) {
    const text = screen(session);
    const matches = text.match(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`)) ?? [];
    if (matches.length >= count) return text;
    if (Date.now() - started > timeoutMs)
      throw new Error(`timed out waiting for ${pattern} (×${count}); screen:\n${text}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

const FIX_BOTH = [
  {
    name: 'edit_file',
    arguments: { path: 'src/calc.js', oldText: '  return a - b;', newText: '  return a + b;', startLine: 3 },
  },
  {
    name: 'edit_file',
    arguments: { path: 'src/calc.js', oldText: '  return a + b;', newText: '  return a * b;', startLine: 7 },
  },
];

let server: ModelServer | null = null;
let session: string | null = null;
afterEach(async () => {
  if (session !== null) {
    try {
      tmux('kill-session', '-t', session);
    } catch {
      // Already gone.
    }
  }
  await server?.close();
});

describe('crustcore chat in a terminal', () => {
  it('streams, asks inline, commits a verified change, steers, chains requests, exits on Ctrl+C twice', async () => {
    // The model's answer to the second request waits until the chat has taken the steering line.
    let releaseSecondAnswer: () => void = () => undefined;
    const steeringTaken = new Promise<void>((resolve) => {
      releaseSecondAnswer = resolve;
    });
    server = await startModelServer(
      (_request, index) =>
        [
          {
            thinking: 'The tests name add and multiply.',
            text: 'Looking at the code.',
            calls: [{ name: 'read_file', arguments: { path: 'src/calc.js' } }],
          },
          { text: 'Fixing both bugs.', calls: FIX_BOTH },
          {
            text: 'Please approve: this only prints a line.',
            calls: [{ name: 'run_command', arguments: { argv: ['sh', '-c', 'echo checking > /dev/null'] } }],
          },
          { text: 'Both functions are fixed.' },
          // Second request: the model "thinks" until the person has steered; then its pending write must not run.
          {
            hold: steeringTaken,
            text: 'I will rewrite the whole file.',
            calls: [{ name: 'write_file', arguments: { path: 'src/calc.js', content: 'broken\n' } }],
          },
          {
            text: 'Understood: only the README.',
            calls: [{ name: 'write_file', arguments: { path: 'README.md', content: '# calc\n\nadd and multiply.\n' } }],
          },
          { text: 'README written.' },
        ][index] ?? { text: 'done' },
    );
    const box = makeBox(CALC_REPO);
    const registry = join(box.root, 'models.json');
    writeFileSync(registry, registryFor(server));
    session = `crustcore-chat-${process.pid}-${Date.now()}`;
    const command = [
      `cd ${REPO_ROOT}`,
      `env CRUSTCORE_HOME=${box.home} HOME=${box.root} NO_COLOR=1 ${process.execPath} ${CLI} chat --dir ${box.repo} --models-config ${registry} --verify "node --test" --approve ask`,
      'echo CHAT-EXITED $?',
      'sleep 60',
    ].join('; ');
    tmux('new-session', '-d', '-s', session, '-x', '220', '-y', '60', command);
    await waitFor(session, /crustcore chat/);
    await waitFor(session, /› $/m);

    tmux('send-keys', '-t', session, '/models', 'Enter');
    await waitFor(session, /scripted\/scripted-model/);

    tmux('send-keys', '-t', session, 'fix the two bugs in src/calc.js', 'Enter');
    let text = await waitFor(session, /Approve\?/);
    expect(text).toContain('thinking: The tests name add and multiply.');
    expect(text).toContain('Looking at the code.');
    expect(text).toContain('⚙ read_file src/calc.js');
    // The prompt shows the kernel's description of the operation, whatever the model said.
    expect(text).toContain('operation : run ["sh","-c","echo checking > /dev/null"] in build sandbox');
    tmux('send-keys', '-t', session, 'yes', 'Enter');
    text = await waitFor(session, /Approve\?/, 90_000, 2);
    expect(text).toMatch(/operation : apply verified patch/);
    expect(text).toMatch(/tokens [\d.k]+ in \/ [\d.k]+ out · \$0\.0000/);
    tmux('send-keys', '-t', session, 'yes', 'Enter');
    text = await waitFor(session, /committed on crustcore\//, 60_000);
    const firstBranch = /committed on (crustcore\/\S+)/.exec(text)?.[1] as string;
    expect(execFileSync('git', ['show', `${firstBranch}:src/calc.js`], { cwd: box.repo, encoding: 'utf8' })).toContain(
      'return a * b;',
    );
    // The working tree was not touched.
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: box.repo, encoding: 'utf8' })).toBe('');

    await waitFor(session, /› $/m);
    tmux('send-keys', '-t', session, 'document the functions in README.md', 'Enter');
    // Steer while the model is answering request 5 (its reply is held back until the steer is taken).
    // No deadline here: a hang is the test's own timeout, with the screen in its report below.
    while (server.requests.length < 5) await new Promise((r) => setTimeout(r, 50));
    tmux('send-keys', '-t', session, '!do not touch src/calc.js, only write README.md', 'Enter');
    await waitFor(session, /\(steering: taken before the next action\)/);
    releaseSecondAnswer();
    text = await waitFor(session, /Approve\?/, 90_000, 3);
    expect(text).toContain('steering: do not touch src/calc.js, only write README.md');
    const steered = server.requests[5]?.json.messages ?? [];
    expect(String(steered.at(-2)?.content)).toMatch(/not run: the user interrupted/);
    expect(String(steered.at(-1)?.content)).toBe(
      '[The user interrupted with new instructions]\ndo not touch src/calc.js, only write README.md',
    );
    // The second request continued the same conversation (the first request's messages were sent again).
    expect(JSON.stringify(server.requests[4]?.json.messages)).toContain('fix the two bugs in src/calc.js');
    tmux('send-keys', '-t', session, 'yes', 'Enter');
    text = await waitFor(session, /committed on crustcore\//, 60_000, 2);
    const branches = [...text.matchAll(/committed on (crustcore\/\S+)/g)].map((m) => m[1] as string);
    const second = branches[1] as string;
    expect(execFileSync('git', ['show', `${second}:README.md`], { cwd: box.repo, encoding: 'utf8' })).toContain(
      'add and multiply',
    );
    expect(execFileSync('git', ['show', `${second}:src/calc.js`], { cwd: box.repo, encoding: 'utf8' })).toContain(
      'return a * b;',
    );

    await waitFor(session, /› $/m);
    tmux('send-keys', '-t', session, '/branch', 'Enter');
    const listing = await waitFor(session, /\/branch N rewinds/);
    // Rewinding the conversation to the end of the first request rewinds the code with it:
    // the next request starts from the first request's branch, not the second's.
    const endOfFirst = /^\s*(\d+) assistant\s+Both functions are fixed\./m.exec(listing)?.[1];
    expect(endOfFirst, listing).toBeDefined();
    tmux('send-keys', '-t', session, `/branch ${endOfFirst}`, 'Enter');
    // Its own line: the commit note earlier on the screen also says "the next request starts from it;".
    text = await waitFor(session, /^ {2}the next request starts from \S+\s*$/m);
    expect(text).toContain(`the next request starts from ${firstBranch}`);
    await waitFor(session, /› $/m);
    tmux('send-keys', '-t', session, 'C-c');
    await waitFor(session, /press Ctrl\+C again to exit/);
    tmux('send-keys', '-t', session, 'C-c');
    text = await waitFor(session, /CHAT-EXITED \d+/);
    expect(text).toContain('CHAT-EXITED 0');
    // The steering line reached the kernel: a UserSteered event naming the artifact that holds its text.
    const frames = framesOf(ledgerDirOf(box.home));
    const steeredFrames = frames.filter((f) => f.kind === 'UserSteered');
    expect(steeredFrames).toHaveLength(1);
    const textHash = String((steeredFrames[0]?.payload as { textHash?: string } | undefined)?.textHash);
    const artifact = join(ledgerDirOf(box.home), 'artifacts', textHash.slice(0, 2), textHash.slice(2));
    expect(readFileSync(artifact, 'utf8')).toBe('do not touch src/calc.js, only write README.md');
  }, 240_000);
});
