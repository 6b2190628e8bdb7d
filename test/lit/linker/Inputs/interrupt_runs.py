#!/usr/bin/env python3
"""interrupt_runs.py [options] -- COMMAND...

Interrupts COMMAND at several moments of its work, one run per delay, and
reports what each run left behind.

  --ready GLOB     the moment to count from: as soon as a path matching GLOB
                   exists (something COMMAND makes while it works)
  --delays MS,...  one run per delay (milliseconds after --ready matched);
                   runs alternate SIGINT and SIGTERM
  --root DIR       where COMMAND writes (repeatable): after each run every
                   path below DIR is reported ("left: PATH"), once the
                   run's complete outputs are removed
  --output PATH    a complete output (repeatable): when a run got as far as
                   making it, it is removed before looking (with the
                   directories above it up to the --root, if empty)

COMMAND gets its own process group and the signal goes to the group, as a
terminal's ^C does. Each run prints "run N: signal SIGINT" (or "exit 0" for
a run that finished first). Ends with "interrupted K of N runs"; exits 1 if
a run ended otherwise (a crash, an error), COMMAND ended before --ready
matched, or no run was interrupted (the input is too fast for the test).
"""
import argparse
import glob
import os
import shutil
import signal
import subprocess
import sys
import time


def leftovers(roots):
    found = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in sorted(dirnames + filenames):
                found.append(os.path.join(dirpath, name))
    return sorted(found)


def remove_output(path, roots):
    if not os.path.lexists(path):
        return
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.remove(path)
    roots = [os.path.abspath(r) for r in roots]
    parent = os.path.dirname(os.path.abspath(path))
    while parent not in roots and parent != "/":
        try:
            os.rmdir(parent)
        except OSError:
            break
        parent = os.path.dirname(parent)


def main():
    if "--" not in sys.argv:
        sys.exit(__doc__)
    split = sys.argv.index("--")
    p = argparse.ArgumentParser()
    p.add_argument("--ready", required=True)
    p.add_argument("--delays", required=True)
    p.add_argument("--root", action="append", default=[])
    p.add_argument("--output", action="append", default=[])
    args = p.parse_args(sys.argv[1:split])
    cmd = sys.argv[split + 1:]
    delays = [int(d) for d in args.delays.split(",")]
    signals = [signal.SIGINT, signal.SIGTERM]
    interrupted = 0
    bad = False
    for run, delay in enumerate(delays):
        sig = signals[run % 2]
        # SIGINT as a shell's foreground job gets it (lit may ignore it).
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL,
                                start_new_session=True,
                                preexec_fn=lambda: signal.signal(
                                    signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 120
        while not glob.glob(args.ready):
            if proc.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.001)
        if proc.poll() is not None:
            print("run %d: ended before %s appeared: exit %d"
                  % (run, args.ready, proc.returncode))
            bad = True
            continue
        time.sleep(delay / 1000.0)
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        code = proc.wait()
        if code < 0:
            print("run %d: signal %s" % (run, signal.Signals(-code).name))
            interrupted += 1
        else:
            print("run %d: exit %d" % (run, code))
            bad = bad or code != 0
        for path in args.output:
            remove_output(path, args.root)
        for path in leftovers(args.root):
            print("left: " + path)
            shutil.rmtree(path, ignore_errors=True)
            if os.path.lexists(path):
                os.remove(path)
    print("interrupted %d of %d runs" % (interrupted, len(delays)))
    return 1 if bad or interrupted == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
