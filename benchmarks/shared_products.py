"""Zhang & Zhu's graph runs sharing their passes over the data (dpadmm_lite.algorithms.zhang2017_perturbation.shared_products).

Prints, with ``uptime``'s load before and after:

1. one K-column CSR product pair (margins ``B f`` and gradient ``Bᵀ r``) against K single pairs, on
   Adult's 40,000 rows dealt to 20 agents (the chapter's data matrix): where sharing pays;
2. the same DVP and PVP runs (full Adult, 20 nodes, T = 100, the chapter's λ and ρ) one by one
   and together through ``network.run_many``: CPU time of this process, and that the traces are
   identical.

Usage: ``.venv/bin/python benchmarks/shared_products.py [--topologies ring,complete,small_world]``
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import dpadmm_lite as dl
from dpadmm_lite import datasets, problems
from dpadmm_lite.algorithms import zhang2017 as graph, zhang2017_perturbation as network


def load() -> str:
    return ", ".join(f"{v:.2f}" for v in os.getloadavg())


def products(K_values=(1, 2, 4, 8, 16, 48)) -> None:
    X, y, _, _ = datasets.load_adult()
    net = graph.network(problems.logistic(X, y, 1e-6, "l2"), topology="ring", n_agents=20, seed=0)
    B, BT = net.data.block, net.data._block_t
    rng = np.random.default_rng(0)
    print("K | one K-column pair (ms CPU) | K single pairs (ms CPU) | single/shared")
    for K in K_values:
        M, R = rng.standard_normal((B.shape[1], K)), rng.standard_normal((B.shape[0], K))
        Ms = [np.ascontiguousarray(M[:, k]) for k in range(K)]
        Rs = [np.ascontiguousarray(R[:, k]) for k in range(K)]
        shared = single = float("inf")
        for _ in range(5):
            t = time.process_time()
            for _ in range(10):
                B @ M, BT @ R
            shared = min(shared, (time.process_time() - t) / 10)
            t = time.process_time()
            for _ in range(10):
                for k in range(K):
                    B @ Ms[k], BT @ Rs[k]
            single = min(single, (time.process_time() - t) / 10)
        print(f"{K} | {shared * 1e3:.2f} | {single * 1e3:.2f} | {single / shared:.2f}")


def runs(topologies) -> None:
    X, y, X_test, y_test = datasets.load_adult()
    lam = {"dvp_graph": 10 ** -2.5 / 1750, "pvp_graph": 0.1 / 146}
    prob = {a: problems.logistic(X, y, l, "l2", X_test=X_test, y_test=y_test) for a, l in lam.items()}
    for p in prob.values():
        p.reference_optimum()
    specs = [dict(algorithm=a, epsilon=e, delta=1e-5, rho=0.1, iterations=100, topology=t, n_agents=20, seed=0)
             for a in lam for e in (1.0, 2.0, 4.0, 8.0) for t in topologies]
    probs = [prob[s["algorithm"]] for s in specs]
    network.run_many(specs[:1], probs[:1])  # warm-up
    t = time.process_time()
    alone = [dl.run(s["algorithm"], p, **{k: v for k, v in s.items() if k != "algorithm"}) for s, p in zip(specs, probs)]
    cpu_alone = time.process_time() - t
    t = time.process_time()
    with network.shared_products() as shared:
        together = network.run_many(specs, probs)
    cpu_together = time.process_time() - t
    same = all(np.array_equal(a.model, b.model) and np.array_equal(a.metrics["empirical_loss"], b.metrics["empirical_loss"])
               for a, b in zip(alone, together))
    print(f"{len(specs)} runs on one deal of the records: one by one {cpu_alone:.1f} s CPU, together "
          f"{cpu_together:.1f} s CPU (ratio {cpu_alone / cpu_together:.2f}); "
          f"{shared.columns / max(shared.products, 1):.1f} products asked per product computed; identical traces: {same}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topologies", default="ring,complete,small_world")
    args = parser.parse_args()
    print("load before:", load())
    products()
    runs(args.topologies.split(","))
    print("load after:", load())
