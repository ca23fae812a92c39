"""Random allocation (balls-in-bins): prvgui's certified bracket and its time against the peer
PLD_accounting (Feldman, Shenfeld et al.'s random-allocation PLD) and Poisson accounting
(dp_accounting's PLD), in the same run.

    python benchmarks/bench_allocation.py

PLD_accounting is not a dependency: install it beside prvgui to compare (``pip install
pld-accounting``); without it only prvgui's column is filled. Each time is one first call for a
setting (in-process, modules imported: what the window waits for when σ or t changes; later
calls for the same setting reuse the cached round). Both tools compute once per case: the machine
is shared, so read the ratios, not the seconds.
"""
from __future__ import annotations

import argparse
import time

CASES = [  # sigma, steps per epoch t, selected k, epochs, delta
    (2.0, 100, 10, 1, 1e-6),
    (1.0, 100, 1, 1, 1e-5),
    (0.8, 1000, 1, 1, 1e-5),
    (0.7, 100, 1, 5, 1e-5),
    (1.0, 1000, 1, 10, 1e-6),
]


def prvgui_bracket(sigma, t, k, epochs, delta):
    from prvgui.accounting.mechanisms import MECHANISM_KINDS, Row
    from prvgui.accounting.queries import bracket
    from prvgui.accounting.queries.accountant import Accountant
    m = MECHANISM_KINDS["random_allocation"](sigma, t, k)
    rows = [Row(m, epochs * m.runs_per_count())]
    return bracket.epsilon_at_least(rows, delta), Accountant(rows, 1e-2).epsilon(delta).upper


def peer_bracket(sigma, t, k, epochs, delta):
    from PLD_accounting import gaussian_allocation_epsilon_range
    up, lo = gaussian_allocation_epsilon_range(delta=delta, sigma=sigma, num_steps=t, num_selected=k,
                                               num_epochs=epochs)
    return lo, up


def poisson(sigma, t, k, epochs, delta):
    from dp_accounting import dp_event, pld
    acc = pld.PLDAccountant()
    acc.compose(dp_event.PoissonSampledDpEvent(k / t, dp_event.GaussianDpEvent(sigma)), t * epochs)
    return acc.get_epsilon(delta)


def timed(fn, case):
    start = time.perf_counter()
    out = fn(*case)
    return out, time.perf_counter() - start


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    timed(prvgui_bracket, (1.5, 10, 1, 1, 1e-5))  # (imports and first-use set-up, not counted)
    try:
        import PLD_accounting  # noqa: F401
        have_peer = True
    except ImportError:
        have_peer = False
    print("| σ, k of t, epochs, δ | prvgui [lower, upper] | time | PLD_accounting [lower, upper] | time "
          "| ratio | Poisson (not a guarantee) |")
    print("|---|---|---|---|---|---|---|")
    for case in CASES:
        (lo, up), t_ours = timed(prvgui_bracket, case)
        peer, t_peer = timed(peer_bracket, case) if have_peer else ((None, None), None)
        sigma, t, k, epochs, delta = case
        peer_text = f"[{peer[0]:.4f}, {peer[1]:.4f}] | {t_peer:.1f} s" if have_peer else "n/a | n/a"
        ratio = f"{t_peer / t_ours:.1f}x" if have_peer else "n/a"
        print(f"| {sigma}, {k} of {t}, {epochs}, {delta:g} | [{lo:.4f}, {up:.4f}] | {t_ours:.2f} s | "
              f"{peer_text} | {ratio} | {poisson(*case):.4f} |", flush=True)


if __name__ == "__main__":
    main()
