/**
 * The spawn broker's program (spawn-broker.ts runs it). Why it exists: Node starts a child with
 * fork(), which copies the whole process's page tables — ~2.5 ms of blocked main thread per child
 * in a 70 MB CrustCore process (1.2 ms in a bare Node, 20 ms at 470 MB), and a task starts ~40
 * git processes. Perl forks from a few megabytes in a fraction of that, off our main thread.
 *
 * Why perl: as for the descriptor launcher, perl-base is Essential on Debian/Ubuntu and passes the
 * environment on byte for byte; POSIX and Socket are in perl-base; `-t` makes it ignore PERL5OPT
 * and PERL5LIB. At start it closes every descriptor from 3 up (close_range, else a /proc listing),
 * so nothing this process was started with reaches a child; perl marks what it opens itself
 * close-on-exec.
 *
 * Protocol. Requests on stdin: a decimal byte length, a newline, then the payload — NUL-separated
 * fields: id, token, cwd, program path, argc, argv…, envc, NAME=value…, stdin flag (0/1). Replies
 * on stdout, one line each (a line is shorter than PIPE_BUF, so a child's write cannot interleave):
 *   R               the broker is up and reads requests (once, first)
 *   S id pid        the child was forked (its own process group: pgid = pid)
 *   X id code sig   it was reaped: exit code, or the signal number
 *   C id            the child connected its streams and execs next (the child writes it)
 *   E id stage errno  it failed before exec (stage: connect, cwd, exec); an X follows
 *   F id errno      fork failed; no child
 * The child connects to the caller's Unix socket once per stream, sending `token\tN\n` (N = 1
 * stdout, 2 stderr, 0 stdin when the flag is 1; else stdin is /dev/null), moves the sockets onto
 * 0-2, enters its directory, takes exactly the given environment and execs. At the end of its stdin
 * (the CLI exited, or was killed) the broker removes the socket and its directory and exits. A fixed
 * script: nothing in it is built from input. It ignores SIGPIPE (a report to a CLI that is gone
 * fails and the broker leaves) and cleans up on SIGTERM, SIGHUP and SIGINT; each child resets every
 * disposition to the default before anything else.
 */

/** Fields of a request before argv (id, token, cwd, program path, argc). */
export const BROKER_REQUEST_HEAD_FIELDS = 5;

export const BROKER_SCRIPT = `use strict; use warnings;
use POSIX ();
use Socket qw(AF_UNIX SOCK_STREAM pack_sockaddr_un);
$SIG{__WARN__} = sub {};
my ($close_range, $socket_path) = @ARGV;
my $broker = $$;
# However the broker ends (its CLI gone, a signal), its socket and directory go with it. Only the
# broker: a child still running perl (between fork and exec) must never remove them.
sub leave {
  my ($signal) = @_;
  if ($$ != $broker) {
    # A child the signal reached before it reset its handlers dies of it, as the program would have.
    # (Perl blocks a signal while its handler runs: unblock, or the kill would wait for the exit.)
    if (defined $signal) {
      $SIG{$signal} = 'DEFAULT';
      kill($signal, $$);
      POSIX::sigprocmask(POSIX::SIG_SETMASK(), POSIX::SigSet->new());
    }
    POSIX::_exit(127);
  }
  (my $directory = $socket_path) =~ s{/[^/]*$}{};
  unlink $socket_path;
  rmdir $directory;
  POSIX::_exit(0);
}
$SIG{$_} = \\&leave for qw(TERM HUP INT);
# A report to a CLI that is gone fails with EPIPE (then the broker leaves) instead of killing it
# before it could clean up.
$SIG{PIPE} = 'IGNORE';
if (syscall($close_range + 0, 3, 0xffffffff, 0) != 0) {
  opendir(my $dir, '/proc/self/fd') or exit 120;
  my @open = grep { /^[0-9]+$/ && $_ >= 3 } readdir($dir);
  closedir($dir);
  POSIX::close($_ + 0) for @open;
}
binmode STDIN; binmode STDOUT;
my %children;
# Perl installs its handlers without SA_RESTART: a SIGCHLD while the write is blocked (the CLI's
# event loop busy, the socket full) fails it with EINTR. A lost S or X would leave a run that cannot
# be stopped or never ends: write it all, again after an interruption; only a CLI gone ends it.
sub report {
  my $line = $_[0];
  while (length $line) {
    my $wrote = syswrite(STDOUT, $line);
    if (defined $wrote) { substr($line, 0, $wrote) = ''; next }
    leave() unless $! == POSIX::EINTR() || $! == POSIX::EAGAIN();
  }
}
report("R\\n");
sub reap {
  while ((my $pid = waitpid(-1, POSIX::WNOHANG())) > 0) {
    my $id = delete $children{$pid};
    next unless defined $id;
    my $status = $?;
    report(($status & 127) ? "X\\t$id\\t\\t" . ($status & 127) . "\\n" : "X\\t$id\\t" . ($status >> 8) . "\\t\\n");
  }
}
sub child_fails { my ($control, $id, $stage) = @_; syswrite($control, "E\\t$id\\t$stage\\t" . ($! + 0) . "\\n"); POSIX::_exit(127) }
sub attach {
  my ($control, $id, $token, $stream) = @_;
  socket(my $socket, AF_UNIX, SOCK_STREAM, 0) or child_fails($control, $id, 'connect');
  connect($socket, pack_sockaddr_un($socket_path)) or child_fails($control, $id, 'connect');
  my $header = "$token\\t$stream\\n";
  syswrite($socket, $header) == length($header) or child_fails($control, $id, 'connect');
  POSIX::dup2(fileno($socket), $stream) == $stream or child_fails($control, $id, 'connect');
}
sub run_child {
  my ($id, $token, $cwd, $program, $argv, $env, $stdin) = @_;
  open(my $control, '>&', \\*STDOUT) or POSIX::_exit(127);
  # The program starts as Node would start it: every disposition the default (an ignored SIGPIPE
  # would survive exec), no blocked signal, its own process group.
  for my $name (keys %SIG) { $SIG{$name} = 'DEFAULT' unless $name =~ /^__/ }
  POSIX::sigprocmask(POSIX::SIG_SETMASK(), POSIX::SigSet->new());
  POSIX::setpgid(0, 0);
  attach($control, $id, $token, 1);
  attach($control, $id, $token, 2);
  if ($stdin eq '1') { attach($control, $id, $token, 0) }
  else { POSIX::close(0); defined(POSIX::open('/dev/null', POSIX::O_RDONLY())) or child_fails($control, $id, 'connect') }
  chdir($cwd) or child_fails($control, $id, 'cwd');
  %ENV = map { my ($name, $value) = split(/=/, $_, 2); ($name, $value) } @$env;
  # C: the streams are connected and the program is next. A child reaped without it never ran and
  # connects nothing more, so its run need not wait for streams.
  syswrite($control, "C\\t$id\\n");
  { no warnings; exec { $program } @$argv; }
  child_fails($control, $id, 'exec');
}
sub launch {
  my @fields = split(/\\0/, $_[0], -1);
  my ($id, $token, $cwd, $program, $argc) = splice(@fields, 0, 5);
  my @argv = splice(@fields, 0, $argc);
  my $envc = shift @fields;
  my @env = splice(@fields, 0, $envc);
  my $stdin = shift(@fields) // '0';
  my $pid = fork();
  if (!defined $pid) { report("F\\t$id\\t" . ($! + 0) . "\\n"); return }
  run_child($id, $token, $cwd, $program, \\@argv, \\@env, $stdin) if $pid == 0;
  # The group exists before S says the child started (the child sets it too; whichever runs first):
  # a SIGTERM the runner sends the group as soon as it hears of the start must not find none.
  POSIX::setpgid($pid, $pid);
  $children{$pid} = $id;
  report("S\\t$id\\t$pid\\n");
}
$SIG{CHLD} = sub {};
my $buffer = '';
while (1) {
  reap();
  my $ready = '';
  vec($ready, 0, 1) = 1;
  # A SIGCHLD that lands just before select blocks would be missed: while children run, wake every 5 ms.
  my $found = select($ready, undef, undef, %children ? 0.005 : undef);
  next if $found <= 0;
  my $got = sysread(STDIN, $buffer, 65536, length $buffer);
  next unless defined $got;
  # The CLI is gone (also killed outright): its socket directory goes with the broker.
  leave() if $got == 0;
  while ($buffer =~ /^([0-9]+)\\n/) {
    my ($length, $head) = ($1, length($1) + 1);
    last if length($buffer) < $head + $length;
    my $payload = substr($buffer, $head, $length);
    substr($buffer, 0, $head + $length) = '';
    launch($payload);
  }
}
`;
