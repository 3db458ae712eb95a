/**
 * Shell completion generated from the command specs, loaded into the real
 * shells: bash sources the script and the test drives `_crustcore` the way
 * readline does (COMP_WORDS / COMP_CWORD, then COMPREPLY); fish runs its own
 * completer (`complete -C`); zsh checks the syntax and that the function
 * loads under compinit (zsh offers no way to drive a completer without a
 * terminal). The words expected come from the specs, so the tests follow them.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACK_SPECS } from '../src/commands/pack-specs.js';
import { CORE_SPECS } from '../src/commands/specs.js';
import { completionModel } from '../src/completion/model.js';
import { bashScript, fishScript, zshScript } from '../src/completion/scripts.js';

const model = completionModel([...CORE_SPECS, ...PACK_SPECS]);
const dir = mkdtempSync(join(tmpdir(), 'crustcore-completion-'));
const scriptFile = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const bashFile = scriptFile('crustcore.bash', bashScript(model));

/** COMPREPLY for the command line `words` with the cursor on its last word. */
function bashComplete(words: readonly string[]): string[] {
  const quoted = words.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(' ');
  const program = `source ${bashFile}; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _crustcore; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const out = execFileSync('bash', ['--norc', '--noprofile', '-c', program], { cwd: dir, encoding: 'utf8' });
  return out.split('\n').filter((line) => line !== '');
}

describe('completion model', () => {
  it('reads actions, flags and flag values from the usage strings', () => {
    const byName = new Map(model.map((c) => [c.name, c]));
    expect(byName.get('secret')?.actions).toEqual(['set', 'list', 'rm']);
    expect(byName.get('tasks')?.actions).toEqual(['list', 'add']);
    expect(byName.get('memory')?.actions).toEqual(['add', 'list', 'forget', 'search', 'context', 'learn']);
    expect(byName.get('completion')?.actions).toEqual(['bash', 'zsh', 'fish']);
    expect(byName.get('daemon')?.actions).toEqual(['install-unit']);
    expect(byName.get('run')?.actions).toEqual([]);
    expect(byName.get('run')?.flags).toEqual(expect.arrayContaining(['--goal', '--worker', '--approve', '--help']));
    expect(byName.get('run')?.flagValues.get('--approve')).toEqual(['auto', 'ask', 'deny']);
    expect(byName.get('restore')?.flags).toEqual(['--home', '--force', '--json', '--help']);
  });

  it('refuses to write a word that is not plain into a script', () => {
    const evil = [{ name: 'x$(touch pwned)', summary: 's', actions: [], flags: [], flagValues: new Map() }];
    expect(() => bashScript(evil)).toThrow(/not plain/);
    expect(() => zshScript(evil)).toThrow(/not plain/);
    expect(() => fishScript(evil)).toThrow(/not plain/);
  });
});

describe('bash', () => {
  it('registers the function for crustcore (complete -p)', () => {
    const out = execFileSync('bash', ['--norc', '-c', `source ${bashFile}; complete -p crustcore`], {
      encoding: 'utf8',
    });
    expect(out.trim()).toBe('complete -o filenames -F _crustcore crustcore');
  });

  it('completes command names, actions, flags, flag values and files', () => {
    // Every command whose name starts with the word, in the specs' order (a new command is counted, not listed).
    const startingWithRe = model.map((c) => c.name).filter((name) => name.startsWith('re'));
    expect(startingWithRe).toEqual(expect.arrayContaining(['recover', 'resume', 'restore']));
    expect(bashComplete(['crustcore', 're'])).toEqual(startingWithRe);
    expect(bashComplete(['crustcore', ''])).toEqual(expect.arrayContaining(model.map((c) => c.name)));
    expect(bashComplete(['crustcore', 'secret', ''])).toEqual(['set', 'list', 'rm']);
    expect(bashComplete(['crustcore', 'completion', 'z'])).toEqual(['zsh']);
    expect(bashComplete(['crustcore', 'run', '--app'])).toEqual(['--approve']);
    expect(bashComplete(['crustcore', 'run', '--approve', 'a'])).toEqual(['auto', 'ask']);
    expect(bashComplete(['crustcore', 'backup', '--'])).toEqual(['--out', '--home', '--json', '--help']);
    expect(bashComplete(['crustcore', 'help', 'ba'])).toEqual(['backup']);
    writeFileSync(join(dir, 'archive-1.ccb'), '');
    expect(bashComplete(['crustcore', 'restore', 'archive-'])).toEqual(['archive-1.ccb']);
  });
});

describe('zsh and fish', () => {
  it('zsh: the script parses and defines _crustcore under compinit', () => {
    const file = scriptFile('_crustcore', zshScript(model));
    execFileSync('zsh', ['-n', file]);
    const out = execFileSync(
      'zsh',
      [
        '-f',
        '-c',
        `autoload -U compinit; compinit -u -d ${join(dir, 'zcompdump')}; source ${file}; whence -w _crustcore; echo "$_comps[crustcore]"`,
      ],
      { encoding: 'utf8' },
    );
    expect(out.split('\n')).toEqual(['_crustcore: function', '_crustcore', '']);
  });

  it('fish: its own completer offers commands, actions and flag values', () => {
    const file = scriptFile('crustcore.fish', fishScript(model));
    execFileSync('fish', ['--no-execute', file]);
    const complete = (line: string): string[] =>
      execFileSync('fish', ['--no-config', '-c', `source ${file}; complete -C '${line}'`], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.split('\t')[0] ?? '');
    expect(complete('crustcore re')).toEqual(expect.arrayContaining(['recover', 'resume', 'restore']));
    expect(complete('crustcore secret ')).toEqual(expect.arrayContaining(['set', 'list', 'rm']));
    expect(complete('crustcore run --approve ').sort()).toEqual(['ask', 'auto', 'deny']);
    expect(complete('crustcore backup --o')).toEqual(['--out']);
  });
});
