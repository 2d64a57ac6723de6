#!/usr/bin/env python3
"""Send files as single UDP datagrams, byte for byte, and report the SIP responses seen.

usage: udpsend.py HOST PORT [--wait S] [--repeat N] [--gap S] FILE...
       udpsend.py --serve      read "HOST PORT WAIT FILE" lines on stdin, answer each with the
                               line below (one process for many sends: no start-up per file)

Each FILE is sent unchanged (CRLF, NUL bytes and non-UTF-8 octets kept) as one datagram from
one socket bound to 127.0.0.1 (ephemeral port), N times (default 1), GAP seconds apart; then the
socket is read for WAIT seconds (default 0.3) after each file. One line per file on stdout:
    NAME sent=BYTES responses=CODE,CODE,...   ("-" when nothing came back)
A response is attributed to the file whose Call-ID it carries, else to the file just sent.
Responses only come back to this socket when the message asks for it (rport) or when the
element answers to the packet's source; a message whose top Via names another host and port is
answered there (RFC 3261 18.2.2), so "-" does not mean the element stayed silent.
"""
import os
import re
import socket
import sys
import time


def send_one(s, f, host, port, wait, repeat=1, gap=0.0):
    data = open(f, "rb").read()
    cid = re.search(rb"^(?:Call-ID|i)[ \t]*:[ \t]*(\S+)", data, re.M | re.I)
    codes = []
    for r in range(repeat):
        s.sendto(data, (host, port))
        if gap and r + 1 < repeat:
            time.sleep(gap)
    end = time.monotonic() + wait
    while time.monotonic() < end:
        try:
            msg, _ = s.recvfrom(65536)
        except socket.timeout:
            continue
        m = re.match(rb"SIP/2\.0 (\d{3})", msg)
        if m:
            rc = re.search(rb"^(?:Call-ID|i)[ \t]*:[ \t]*(\S+)", msg, re.M | re.I)
            if not cid or not rc or rc.group(1) == cid.group(1):
                codes.append(m.group(1).decode())
    print("%s sent=%d responses=%s" % (os.path.basename(f), len(data), ",".join(codes) or "-"))
    sys.stdout.flush()


def main(argv):
    if argv[1:] == ["--serve"]:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        s.settimeout(0.05)
        for line in sys.stdin:
            host, port, wait, f = line.rstrip("\n").split(" ", 3)
            send_one(s, f, host, int(port), float(wait))
        return 0
    host, port = argv[1], int(argv[2])
    wait, repeat, gap, files = 0.3, 1, 0.0, []
    i = 3
    while i < len(argv):
        a = argv[i]
        if a in ("--wait", "--repeat", "--gap"):
            v = argv[i + 1]
            i += 2
            if a == "--wait":
                wait = float(v)
            elif a == "--repeat":
                repeat = int(v)
            else:
                gap = float(v)
            continue
        files.append(a)
        i += 1
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(0.05)
    for f in files:
        send_one(s, f, host, port, wait, repeat, gap)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
