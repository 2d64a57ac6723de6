"""The CPU seconds an `osn node` proxy spent, beside the closed form of the messages it counted.

The node's virtual CPU spends each message's cost (its [server NAME]'s cost of that kind) before
the next, so its busy time (util x elapsed_s of its summary) is the sum over the messages it
served of their costs. The counts come from the summary's own counters, kept apart from the
server's clock: new INVITEs (calls_in), retransmitted requests absorbed (retrans_absorbed), ACKs
forwarded, BYEs and CANCELs, and the responses, which are the datagrams left over.

At low load a call brings each proxy 7 messages (INVITE, ACK, BYE, 100, 180, 200, the BYE's 200;
one fewer at the last proxy, whose uas sends no 100), and the form is that per-call sum. A machine
too slow to answer within T1 (ASan on a busy CI runner) adds retransmitted requests, absorbed at
cost_retrans, and the responses resent to them: the counts carry those, the per-call sum does not.
"""
import configparser

KINDS = ("invite", "retrans", "response", "ack", "bye", "cancel")


def file_costs(path, server):
    """The costs [server SERVER] of scenario PATH writes, by kind; the kinds it leaves out are
    absent (the node's defaults then apply)."""
    ini = configparser.ConfigParser(inline_comment_prefixes=(";",), comment_prefixes=(";", "#"),
                                    strict=False)
    ini.read(path)
    sec = ini["server " + server]
    return {k: float(sec["cost_" + k]) for k in KINDS if "cost_" + k in sec}


def counts(s):
    """The messages summary S says the node served, by kind."""
    n = {"invite": s["calls_in"], "retrans": s["retrans_absorbed"], "ack": s["acks_forwarded"],
         "bye": s["bye_in"], "cancel": s["cancel_in"]}
    n["response"] = (s["datagrams_in"] - sum(n.values()) - s["stray"] - s["bad_answered"] -
                     s["bad_dropped"])
    return n


def spent(s):
    """The CPU seconds summary S's virtual CPU was busy."""
    return s["util"] * s["elapsed_s"]


def closed_form(s, written):
    """The CPU seconds the messages of summary S cost at the costs WRITTEN in the scenario (the
    node's resolved values for the kinds the file leaves out)."""
    res = [v for k, v in s["scenario_resolved"].items() if k.startswith("server ")][0]
    n = counts(s)
    return sum(n[k] * written.get(k, res["cost_" + k]) for k in KINDS)


# The virtual CPU spends each cost exactly; what is left is a message still in service when the
# node stops (0.02% at most seen, in loaded ASan runs). A service stretched to a late arrival
# (datagrams a link held, handed in before the timers due with them) is 0.6 to 1.4% over.
TOLERANCE = 0.0025


def check(name, s, written, per_call):
    """Compares node NAME's spent CPU (summary S) with the closed form of its messages at the
    costs WRITTEN, within TOLERANCE; returns (a line to print, whether it held). PER_CALL, the
    closed form of a call without retransmissions, is printed beside."""
    real, model = spent(s), closed_form(s, written)
    ok = model > 0 and abs(real / model - 1) <= TOLERANCE
    line = (f"CPU {name}: {real:.4f} s spent, {model:.4f} s its messages' costs; "
            f"{real / s['calls_in'] * 1e3:.4f} ms a call ({per_call * 1e3:.4f} without "
            f"retransmissions, {s['retrans_absorbed']} absorbed): {'ok' if ok else 'FAIL'}")
    return line, ok
