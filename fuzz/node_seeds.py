#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_node (fuzz/corpus_node/): call flows of the shapes the node
meets (a call through a proxy, copies, a dead next hop, a 486, Max-Forwards 0, the UAS with and
without the ACK, BYE, CANCEL) for each element fuzz_node plays, and every RFC 4475 torture
message and SIPp's uac INVITE as a datagram from upstream. The record format is fuzz_node.c's.

    python3 fuzz/node_seeds.py        (rewrites fuzz/corpus_node/; deterministic)
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus_node")
DATA = os.path.join(os.path.dirname(HERE), "tests", "data")


def rec(op, payload):
    return bytes([op]) + struct.pack("<H", len(payload)) + payload


def dgram(text, source=0):
    return rec(4 * source, text.encode() if isinstance(text, str) else text)


def step(ms):
    return rec(2, struct.pack("<H", ms))


def answer(status, k=0):
    return rec(3, bytes([k, status // 256, status % 256]) if status >= 100 else b"")


def req(method, call, branch, cseq=1, mf=70, to_tag=""):
    return (f"{method} sip:bob@127.0.0.1 SIP/2.0\r\n"
            f"Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK{branch}\r\n"
            f"Max-Forwards: {mf}\r\nFrom: <sip:alice@127.0.0.1>;tag=a{call}\r\n"
            f"To: <sip:bob@127.0.0.1>{to_tag}\r\nCall-ID: {call}@seed\r\n"
            f"CSeq: {cseq} {method}\r\nContent-Length: 0\r\n\r\n")


def status(s):  # fuzz_node's op 3 takes 100 + n % 600
    return s - 100


FLOWS = {
    "call": [dgram(req("INVITE", 1, "i1")), step(10), answer(status(100)), answer(status(180)),
             answer(status(200)), dgram(req("ACK", 1, "a1", to_tag=";tag=fz")), step(2000),
             dgram(req("BYE", 1, "b1", cseq=2, to_tag=";tag=fz")), step(10),
             answer(status(200))],
    "copies": [dgram(req("INVITE", 2, "i2")), step(500), dgram(req("INVITE", 2, "i2")),
               step(1000), dgram(req("INVITE", 2, "i2")), answer(status(200)),
               answer(status(200)), dgram(req("ACK", 2, "a2", to_tag=";tag=fz"))],
    "dead": [dgram(req("INVITE", 3, "i3")), step(40000), dgram(req("ACK", 3, "i3", to_tag=";tag=x"))],
    "busy": [dgram(req("INVITE", 4, "i4")), step(50), answer(status(486)), step(50),
             answer(status(486)), dgram(req("ACK", 4, "i4", to_tag=";tag=fz"))],
    "mf0": [dgram(req("INVITE", 5, "i5", mf=0)), step(10), dgram(req("ACK", 5, "i5", mf=0))],
    "noack": [dgram(req("INVITE", 6, "i6")), step(100), answer(status(200)), step(40000)],
    "cancel": [dgram(req("INVITE", 7, "i7")), step(100), dgram(req("CANCEL", 7, "i7")),
               step(100), answer(status(487)), dgram(req("BYE", 8, "b8", cseq=2))],
    "two": [dgram(req("INVITE", 9, "i9"), 0), dgram(req("INVITE", 10, "i10"), 1), step(5),
            answer(status(200), 1), answer(status(200), 0),
            dgram(req("ACK", 9, "a9", to_tag=";tag=fz"), 0)],
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    n = 0
    for element in range(4):  # UAS, edge none, edge none, core (byte 0 % 4)
        for name, flow in FLOWS.items():
            with open(os.path.join(OUT, f"{name}-{element}"), "wb") as f:
                f.write(bytes([element]) + b"".join(flow))
            n += 1
    for sub, element in (("rfc4475", 1), ("sipp", 3)):
        d = os.path.join(DATA, sub)
        for name in sorted(os.listdir(d)):
            if name.endswith((".dat", ".sip")):
                body = open(os.path.join(d, name), "rb").read()[:60000]
                with open(os.path.join(OUT, f"{sub}-{name}"), "wb") as f:
                    f.write(bytes([element]) + rec(0, body) + step(40000))
                n += 1
    print(f"{n} seeds in {OUT}")


if __name__ == "__main__":
    main()
