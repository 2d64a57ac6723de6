#!/usr/bin/python3
"""SimPy peer of bench/bench_sim.c: the same two-loop M|M|1|<L,H>|<H,R> node in SimPy.

Usage: /usr/bin/python3 bench/simpy_peer.py [EVENTS]. L = 10, H = 15, R = 20, lambda = 1.2,
lambda' = 0.6 (offered arrivals thinned with probability 1/2 in overload), mu = 1, policy I:
one arrival process and one server process, the queue a counter, modes switched at the
thresholds as in src/sim/hysteretic.c. Runs until about EVENTS events (offered arrivals plus
departures, default 1e6) and prints one key=value line like bench_sim: events, wall time,
events per second, P0 and T_ret (no interval: one run). Debian 12's python3-simpy is SimPy
2.3 (module SimPy); SimPy 3 or 4 (module simpy, Debian python3-simpy3) is used when present.
"""
import random
import sys
import time

L, H, R, LAM, LAMP, MU = 10, 15, 20, 1.2, 0.6, 1.0
WARMUP = 1000.0


class Node:
    """State and statistics shared by the two processes."""

    def __init__(self, now):
        self.now = now  # function giving the simulated time
        self.n = 0
        self.mode = 0
        self.events = 0
        self.t_last = 0.0
        self.t_mode = [0.0, 0.0, 0.0]
        self.t_on = None
        self.ret_sum = 0.0
        self.ret_n = 0

    def account(self):
        t = self.now()
        if t > WARMUP:
            self.t_mode[self.mode] += t - max(self.t_last, WARMUP)
        self.t_last = t

    def set_mode(self, to):
        t = self.now()
        if self.mode == 0:
            self.t_on = t
        if to == 0 and self.t_on is not None and self.t_on >= WARMUP:
            self.ret_sum += t - self.t_on
            self.ret_n += 1
        self.mode = to

    def arrival(self, rnd):
        """An offered arrival; True when it joins the queue."""
        self.events += 1
        if self.mode == 2 or (self.mode == 1 and rnd.random() >= LAMP / LAM):
            return False
        self.account()
        self.n += 1
        if self.mode == 0 and self.n == H:
            self.set_mode(1)
        elif self.mode == 1 and self.n == R:
            self.set_mode(2)
        return True

    def departure(self):
        self.events += 1
        self.account()
        self.n -= 1
        if self.mode == 1 and self.n == L:
            self.set_mode(0)
        elif self.mode == 2 and self.n == H:
            self.set_mode(1)


def run_simpy3(horizon, rnd):
    import simpy

    env = simpy.Environment()
    node = Node(lambda: env.now)
    state = {"idle": None}

    def source():
        while True:
            yield env.timeout(rnd.expovariate(LAM))
            if node.arrival(rnd) and state["idle"] is not None:
                ev, state["idle"] = state["idle"], None
                ev.succeed()

    def server():
        while True:
            if node.n == 0:
                state["idle"] = env.event()
                yield state["idle"]
            yield env.timeout(rnd.expovariate(MU))
            node.departure()

    env.process(source())
    env.process(server())
    env.run(until=horizon)
    return node, "simpy " + getattr(simpy, "__version__", "3+")


def run_simpy2(horizon, rnd):
    from SimPy import Simulation as S

    sim = S.Simulation()
    sim.initialize()
    node = Node(sim.now)

    class Server(S.Process):
        def run(self):
            while True:
                if node.n == 0:
                    yield S.passivate, self
                yield S.hold, self, rnd.expovariate(MU)
                node.departure()

    class Source(S.Process):
        def run(self, server):
            while True:
                yield S.hold, self, rnd.expovariate(LAM)
                if node.arrival(rnd) and server.passive():
                    sim.reactivate(server)

    server = Server(sim=sim)
    source = Source(sim=sim)
    sim.activate(server, server.run())
    sim.activate(source, source.run(server))
    sim.simulate(until=horizon)
    return node, "SimPy " + getattr(S, "version", "2")


def main():
    events = float(sys.argv[1]) if len(sys.argv) > 1 else 1e6
    horizon = WARMUP + events / 2.186
    rnd = random.Random(1)
    t0 = time.perf_counter()
    try:
        node, which = run_simpy3(horizon, rnd)
    except ImportError:
        node, which = run_simpy2(horizon, rnd)
    wall = time.perf_counter() - t0
    node.account()
    observed = sum(node.t_mode)
    print("engine=%s events=%d wall_s=%.3f events_per_s=%.4g P0=%.6f T_ret=%.5f"
          % (which.replace(" ", "-"), node.events, wall, node.events / wall,
             node.t_mode[0] / observed, node.ret_sum / max(node.ret_n, 1)))


if __name__ == "__main__":
    main()
