# Independent Hodges-Lehmann / Moses reference: every pairwise difference
# written down and sorted; the exact critical value by enumerating every
# split of n1 + n2 ranks (the distribution of U from its definition); the
# normal one from its formula; Benjamini-Hochberg by its step-up rule (the
# largest i with p(i) <= i q / n, for the q each p first passes at).
# Python's standard library only (no SciPy here). t/unit/stats-test.c holds
# the values it prints; run: python3 t/unit/hl-reference.py
import itertools, math, statistics
def k_exact(n1, n2, alpha=0.05):
    counts = {}
    for xs in itertools.combinations(range(n1 + n2), n1):
        u = sum(xs) - n1 * (n1 - 1) // 2
        counts[u] = counts.get(u, 0) + 1
    total = math.comb(n1 + n2, n1); k = 0; below = 0
    for u in range(n1 * n2 + 1):
        below += counts.get(u, 0)
        if 2 * below / total > alpha: break
        k = u + 1
    return k
def k_normal(n1, n2, alpha=0.05):
    z = statistics.NormalDist().inv_cdf(1 - alpha / 2)
    return max(0, math.floor(n1 * n2 / 2 - z * math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12)))
def hl(x, y):
    d = sorted(b - a for a in x for b in y); n = len(d)
    k = k_exact(len(x), len(y)) if len(x) + len(y) <= 60 else k_normal(len(x), len(y))
    est = statistics.median(d)
    return est, k, (d[k - 1], d[n - k]) if k >= 1 else None
def bh(p):
    n = len(p); q = []
    for pi in p:
        # the smallest level at which the step-up rule rejects pi
        best = 1.0
        for i in range(1, n + 1):
            ps = sorted(p)
            if pi <= ps[i - 1]: best = min(best, ps[i - 1] * n / i)
        q.append(best)
    return q
cases = {
 'sep5': ([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]),
 'sep3': ([1, 2, 3], [4, 5, 6]),
 'issue': ([1] * 7 + [0.5] * 3, [1] * 7 + [1.5] * 3),
 'mixed10': ([98, 101, 97, 103, 100, 99, 102, 96, 104, 100.5],
             [105, 108, 103, 110, 107, 104, 109, 106, 111, 102]),
 'big': (list(range(31)), [i + 10.5 for i in range(31)]),
}
for name, (x, y) in cases.items(): print(name, hl(x, y))
for n in [(3, 3), (4, 4), (5, 5), (10, 10), (5, 8)]: print('k_exact', n, k_exact(*n))
print('k_normal (31, 31)', k_normal(31, 31))
print('bh', bh([0.01, 0.04, 0.03, 0.005]), bh([0.5, 0.02, 0.02]))
