#!/usr/bin/env python3
"""interrupt.py SIGNAL WATCH_DIR COMMAND...

Runs COMMAND and sends it SIGNAL (INT, TERM) as soon as a temporary output
file (a name containing ".tmp.") exists anywhere below WATCH_DIR, i.e. in the
middle of writing its outputs; waits for it and prints how it ended
("signal SIGINT" or "exit N"). Exits 1 if COMMAND ended before such a file
appeared or none appeared within 300 s: the interrupt must hit a write.
"""
import os
import signal
import subprocess
import sys
import time


def temporary_file_below(root):
    for dirpath, _, files in os.walk(root):
        if any(".tmp." in f for f in files):
            return True
    return False


def main():
    sig = getattr(signal, "SIG" + sys.argv[1])
    watch, cmd = sys.argv[2], sys.argv[3:]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not temporary_file_below(watch):
        if proc.poll() is not None:
            print("ended before writing: exit %d" % proc.returncode)
            return 1
        if time.monotonic() > deadline:
            proc.kill()
            print("no temporary file appeared")
            return 1
        time.sleep(0.005)
    proc.send_signal(sig)
    code = proc.wait()
    print("signal " + signal.Signals(-code).name if code < 0 else "exit %d" % code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
