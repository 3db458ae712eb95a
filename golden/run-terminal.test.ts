/**
 * `crustcore run` in a real terminal (tmux): while the worker runs, the live
 * status line shows the step and the elapsed time; when the task ends it is
 * gone from the screen and every narration line is intact. The worker waits
 * for a file the test writes once the status line is on the screen, so the
 * test never depends on how long anything takes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, CLI, makeRepo, NODE_REPO, REPO_ROOT } from './cli-harness.js';

beforeAll(() => buildCli(), 60_000);
const tmux = (...args: string[]): string => execFileSync('tmux', args, { encoding: 'utf8' });
const screen = (session: string): string => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', session);

async function waitFor(session: string, pattern: RegExp, timeoutMs = 120_000): Promise<string> {
  const started = Date.now();
  for (;;) {
    const text = screen(session);
    if (pattern.test(text)) return text;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${pattern}; screen:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

let session: string | null = null;
afterEach(() => {
  if (session === null) return;
  try {
    tmux('kill-session', '-t', session);
  } catch {
    // Already gone.
  }
  session = null;
});

/** The worker's pool slot under `home` (the first task of a repository gets work-0). */
function workSlot(home: string): string | null {
  const pool = join(home, 'pool');
  if (!existsSync(pool)) return null;
  for (const repoId of readdirSync(pool)) {
    const slot = join(pool, repoId, 'work-0');
    if (existsSync(slot)) return slot;
  }
  return null;
}

describe('crustcore run in a terminal', () => {
  it('shows a live status line while the worker runs and leaves no trace of it at the end', async () => {
    const box = makeRepo({
      ...NODE_REPO,
      // Waits for the test's go-ahead, then fixes add().
      'fix.sh': "while [ ! -e go ]; do sleep 0.1; done\nrm go\nsed -i 's/a - b/a + b/' src/math.js\n",
    });
    const script = join(box.root, 'run.sh');
    writeFileSync(
      script,
      [
        `cd ${REPO_ROOT}`,
        // CI is unset: the status line is for a person, and CI runners set it.
        `env -u CI NO_COLOR=1 CRUSTCORE_HOME=${box.home} HOME=${box.root} ${process.execPath} ${CLI} run --dir ${box.repo} --goal "fix add" --worker "sh fix.sh" --verify "node --test" --approve auto`,
        'echo RUN-EXITED $?',
        'sleep 120',
      ].join('\n'),
    );
    session = `crustcore-run-${process.pid}-${Date.now()}`;
    tmux('new-session', '-d', '-s', session, '-x', '200', '-y', '50', `sh ${script}`);
    const during = await waitFor(session, /attempt 1: the worker is running · \d+\.\d s/);
    expect(during).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] attempt 1: the worker is running/);
    const slot = workSlot(box.home);
    expect(slot, during).not.toBeNull();
    writeFileSync(join(slot as string, 'go'), '');
    const after = await waitFor(session, /RUN-EXITED \d+/);
    expect(after).toContain('RUN-EXITED 0');
    expect(after).toMatch(/applied atomically/);
    expect(after).toMatch(/completed/);
    // Erased for good: no spinner and no step text is left anywhere on the screen.
    expect(after).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    expect(after).not.toContain('the worker is running');
    expect(after).not.toContain('verifying the patch');
  }, 240_000);
});
