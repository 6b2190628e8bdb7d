#!/usr/bin/env python3
"""Runs a command, waits until a line of its stdout contains PATTERN, then
sends it SIGINT and prints how it ended: "signal N" or "exit N".

usage: interrupt.py PATTERN COMMAND [ARG...]
"""
import signal
import subprocess
import sys


def main():
    pattern, cmd = sys.argv[1], sys.argv[2:]
    # SIGINT as a shell's foreground job gets it (lit may ignore it).
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                          signal.SIG_DFL))
    for line in p.stdout:
        if pattern in line:
            p.send_signal(signal.SIGINT)
            break
    p.stdout.read()
    rc = p.wait()
    print("signal %d" % -rc if rc < 0 else "exit %d" % rc)


if __name__ == "__main__":
    main()
