#!/usr/bin/env python3
"""Runs a command with stdout and stderr on a pseudo-terminal (what a user's
terminal is to it) and prints what it wrote there, with "\\r\\n" as "\\n";
exits with its status.

usage: run_in_pty.py COMMAND [ARG...]
"""
import os
import pty
import subprocess
import sys

master, slave = pty.openpty()
proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=slave,
                        stderr=slave)
os.close(slave)
out = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: the command closed the terminal
        break
    if not chunk:
        break
    out += chunk
os.close(master)
status = proc.wait()
sys.stdout.write(out.decode(errors="replace").replace("\r\n", "\n"))
sys.exit(status)
