"""Derive the Chebyshev coefficients of prvgui.accounting.special (run by hand; needs mpmath).

    python benchmarks/fit_erfcx.py

erfc(x) = exp(-x^2) erfcx(x). Two pieces, each a Chebyshev series in a variable
u in [-1, 1] in which the summand is smooth:

* 1/2 <= x <= 4: g(u) = erfcx(x) (x + 3), u affine in t = (x - 3) / (x + 3);
* x >= 4: g(u) = sqrt(pi) x erfcx(x), u = 2 (4 / x)^2 - 1 (g -> 1 as x -> inf).

Coefficients come from 40-digit mpmath values on 120 Chebyshev nodes (a discrete
cosine transform); the script prints them and the largest relative error of the
float64 series on a dense grid of each piece.
"""
import mpmath as mp
import numpy as np

NODES = 120
K, A, X1 = 3.0, 0.5, 4.0
TA, TB = (A - K) / (A + K), (X1 - K) / (X1 + K)


def erfcx(x):
    return mp.erfc(x) * mp.exp(x * x)


def mid_x(u):
    t = TA + (u + 1) / 2 * (TB - TA)
    return K * (1 + t) / (1 - t)


def mid(u):
    x = mid_x(u)
    return erfcx(x) * (x + K)


def tail(u):
    w = (u + 1) / 2
    if w == 0:
        return mp.mpf(1)
    x = X1 / mp.sqrt(w)
    return x * erfcx(x) * mp.sqrt(mp.pi)


def fit(f, n):
    theta = [mp.pi * (i + mp.mpf(1) / 2) / NODES for i in range(NODES)]
    vals = [f(mp.cos(th)) for th in theta]
    c = [2 * mp.fsum(v * mp.cos(j * th) for v, th in zip(vals, theta)) / NODES for j in range(n)]
    c[0] /= 2
    return [float(x) for x in c]


def main() -> None:
    mp.mp.dps = 40
    cm, ct = fit(mid, 16), fit(tail, 14)
    for name, c in (("_MID", cm), ("_TAIL", ct)):
        print(f"{name} = (")
        for v in c:
            print(f"    {v!r},")
        print(")")
    xs = np.linspace(A, X1, 2000)
    u = 2 * ((xs - K) / (xs + K) - TA) / (TB - TA) - 1
    got = np.polynomial.chebyshev.chebval(u, cm) / (xs + K)
    e1 = max(abs(g / float(erfcx(mp.mpf(x))) - 1) for g, x in zip(got, xs))
    xs = np.concatenate([np.linspace(X1, 30, 2000), np.geomspace(30, 1e8, 100)])
    got = np.polynomial.chebyshev.chebval(2 * (X1 / xs) ** 2 - 1, ct)
    e2 = max(abs(g / float(tail(2 * (X1 / mp.mpf(x)) ** 2 - 1)) - 1) for g, x in zip(got, xs))
    print(f"# largest relative error of the series: {e1:.1e} on [1/2, 4], {e2:.1e} beyond")


if __name__ == "__main__":
    main()
