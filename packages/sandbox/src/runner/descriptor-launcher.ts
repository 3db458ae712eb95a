/**
 * The descriptor-closing launcher. Node (libuv) does not close inherited
 * descriptors that lack O_CLOEXEC when it spawns a child: a directory a
 * shell opened with `exec 200</`, a CI runner's pipe or a socket an editor
 * passed down would reach every child, and bubblewrap hands them on into
 * the sandbox (an open directory descriptor is the whole host filesystem).
 *
 * So every child starts as this launcher, which runs INSIDE the child, right
 * before the real program: it puts stderr back on fd 2, moves the one
 * descriptor the run hands on (bubblewrap's seccomp program) to fd 3, closes
 * every other descriptor from there up with one `close_range` call, and then
 * `exec`s the program. It closes by number range, not by a list of known
 * descriptors, so it holds for any number and any kind (directory, file,
 * pipe, socket, eventfd, epoll), including ones a library opened after
 * start-up.
 *
 * Why perl: it is part of every Debian/Ubuntu base system (perl-base is
 * Essential), starts in a few milliseconds, and, unlike bash, passes the
 * environment on byte for byte (bash adds PWD, SHLVL and `_` and rewrites
 * exported functions). `-t` turns on taint mode, in which perl ignores
 * PERL5OPT, PERL5LIB and PERLLIB, so the caller's environment cannot load
 * code into the launcher; its taint complaints are warnings, silenced.
 * Perl's own start-up warnings (a bad locale) go to /dev/null: the child's
 * fd 2 is /dev/null until the launcher moves the real stderr (fd 3) there.
 */

/** Prefix of the launcher's own failure message on stderr (exit code 125). */
export const LAUNCHER_FAILURE_MARKER = 'crustcore-launcher:';
/** Exit code of a launcher that could not set the descriptors up; the program never started. */
export const LAUNCHER_FAILURE_EXIT = 125;

/** Syscall numbers the launcher needs, per Node architecture name. close_range is 436 on both. */
const SYSCALLS: Readonly<Record<string, { readonly dup3: number; readonly close: number }>> = {
  x64: { dup3: 292, close: 3 },
  arm64: { dup3: 24, close: 57 },
};
const CLOSE_RANGE = 436;

/**
 * argv: dup3, close, carriesInput (0/1), program path, argv0, args…
 * Child descriptors on entry: 0 stdin, 1 stdout, 2 /dev/null, 3 stderr,
 * 4 the input to hand on (only when carriesInput is 1), anything inherited.
 * A fixed script: nothing in it is built from input.
 */
export const LAUNCHER_SCRIPT = `$SIG{__WARN__} = sub {};
my ($dup3, $close, $carries, $program, @argv) = @ARGV;
sub fail { syswrite(STDERR, "${LAUNCHER_FAILURE_MARKER} $_[0]: $!\\n"); exit ${LAUNCHER_FAILURE_EXIT}; }
syscall($dup3, 3, 2, 0) == 2 or fail('cannot restore stderr');
if ($carries) { syscall($dup3, 4, 3, 0) == 3 or fail('cannot place the handed-on descriptor'); }
my $first = $carries ? 4 : 3;
if (syscall(${CLOSE_RANGE}, $first, 0xffffffff, 0) != 0) {
  opendir(my $dir, '/proc/self/fd') or fail('no close_range and no /proc/self/fd');
  my @open = grep { /^[0-9]+$/ && $_ >= $first } readdir($dir);
  closedir($dir);
  for my $fd (@open) { syscall($close, $fd + 0); }
}
exec { $program } @argv;
fail("cannot execute $program");
`;

/** The launcher argv, or a reason it cannot run on this architecture. */
export function launcherArgv(
  perlPath: string,
  carriesInput: boolean,
  programPath: string,
  argv: readonly string[],
): { readonly argv: [string, ...string[]] } | { readonly problem: string } {
  const numbers = SYSCALLS[process.arch];
  if (numbers === undefined) {
    return { problem: `the descriptor-closing launcher does not support the ${process.arch} architecture` };
  }
  return {
    argv: [
      perlPath,
      '-t',
      '-e',
      LAUNCHER_SCRIPT,
      String(numbers.dup3),
      String(numbers.close),
      carriesInput ? '1' : '0',
      programPath,
      ...argv,
    ],
  };
}
