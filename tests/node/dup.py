#!/usr/bin/env python3
"""Copies of INVITEs toward an `osn node` proxy (tests/test_node_workers.sh).

Usage: dup.py PORT N same|other

Sends N INVITEs to 127.0.0.1:PORT, each from a UDP socket of its own (so the kernel's
SO_REUSEPORT hash spreads them over the node's workers), and each INVITE twice, 50 ms apart,
with the same branch (a retransmission, RFC 3261 17.1.1.2). With `same` the copy leaves from
the original's socket, as every UA sends a transaction's retransmissions; with `other` it
leaves from a second socket of its own. Each Via carries rport (RFC 3581), so the node answers
the socket each request came from. Waits (at most 10 s) until every call has a final response
on some socket; exit 0 then, 1 otherwise. Prints what each socket received.
"""
import select
import socket
import sys
import time


def invite(port, i, sport):
    call = f"workers-dup-{i}-{time.monotonic_ns()}@127.0.0.1"
    branch = f"z9hG4bKdup{i:04d}x{time.monotonic_ns() % 10**9}"
    return call, (
        f"INVITE sip:b@127.0.0.1:{port} SIP/2.0\r\n"
        f"Via: SIP/2.0/UDP 127.0.0.1:{sport};branch={branch};rport\r\n"
        "Max-Forwards: 70\r\n"
        f"From: <sip:a@127.0.0.1>;tag=dup{i}\r\n"
        f"To: <sip:b@127.0.0.1:{port}>\r\n"
        f"Call-ID: {call}\r\n"
        "CSeq: 1 INVITE\r\n"
        f"Contact: <sip:a@127.0.0.1:{sport}>\r\n"
        "Content-Length: 0\r\n\r\n").encode()


def main():
    port, n, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    socks, final = [], {}
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        copy = s
        if mode == "other":
            copy = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            copy.bind(("127.0.0.1", 0))
        call, msg = invite(port, i, s.getsockname()[1])
        s.sendto(msg, ("127.0.0.1", port))
        socks += [s] if copy is s else [s, copy]
        final[call] = None
        time.sleep(0.05)
        copy.sendto(msg, ("127.0.0.1", port))
    end = time.monotonic() + 10
    while time.monotonic() < end and any(v is None for v in final.values()):
        r, _, _ = select.select(socks, [], [], 0.2)
        for s in r:
            data = s.recv(65535).decode(errors="replace")
            status = data.split(" ", 2)[1] if data.startswith("SIP/2.0 ") else "?"
            call = next((line.split(":", 1)[1].strip() for line in data.split("\r\n")
                         if line.lower().startswith("call-id:")), "")
            print(f"{s.getsockname()[1]}: {status} {call}")
            if call in final and status.isdigit() and int(status) >= 200 and not final[call]:
                final[call] = int(status)
    missing = [c for c, v in final.items() if v is None]
    print(f"{n - len(missing)} of {n} calls answered finally; missing {missing[:3]}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
