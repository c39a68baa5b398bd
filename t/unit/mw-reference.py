# Independent Mann-Whitney reference: U by counting pairs (the definition,
# not ranks); exact p by enumerating every split of the pooled values;
# normal p from Lehmann's tie-corrected variance with continuity 1/2.
# Python's standard library only (no SciPy here). t/unit/stats-test.c
# holds the values it prints; run: python3 t/unit/mw-reference.py
import itertools, math, collections
def U1(x, y):
    return sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in x for b in y)
def exact(x, y):
    n1, n2 = len(x), len(y); pool = list(x) + list(y)
    u = min(U1(x, y), n1 * n2 - U1(x, y)); le = tot = 0
    for idx in itertools.combinations(range(n1 + n2), n1):
        xs = [pool[i] for i in idx]; ys = [pool[i] for i in range(n1 + n2) if i not in idx]
        v = U1(xs, ys); tot += 1; le += v <= u
    # one-sided count P(U1 <= u) under H0, doubled
    return u, min(1.0, 2.0 * le / tot)
def exact_ties(x, y):
    # with ties: P(U1 <= u1) and P(U1 >= u1) over every split, the smaller doubled
    n1, n2 = len(x), len(y); pool = list(x) + list(y); u1 = U1(x, y); le = ge = tot = 0
    for idx in itertools.combinations(range(n1 + n2), n1):
        xs = [pool[i] for i in idx]; ys = [pool[i] for i in range(n1 + n2) if i not in idx]
        v = U1(xs, ys); tot += 1; le += v <= u1; ge += v >= u1
    return min(u1, n1 * n2 - u1), min(1.0, 2.0 * min(le, ge) / tot)
def normal(x, y):
    n1, n2 = len(x), len(y); n = n1 + n2; u1 = U1(x, y)
    t = collections.Counter(list(x) + list(y)).values()
    var = n1 * n2 / 12 * ((n + 1) - sum(k**3 - k for k in t) / (n * (n - 1)))
    z = (abs(u1 - n1 * n2 / 2) - 0.5) / math.sqrt(var)
    return min(u1, n1 * n2 - u1), (1.0 if z <= 0 else min(1.0, math.erfc(z / math.sqrt(2))))
cases = {
 'sep3': ([1,2,3],[4,5,6]), 'sep4': ([1,2,3,4],[5,6,7,8]),
 'inter4': ([1,3,5,7],[2,4,6,8]), 'sep5x4': ([10,11,12,13,14],[1,2,3,4]),
 'mid5': ([1,4,6,9,10],[2,3,5,7,8]),
}
for k,(x,y) in cases.items(): print(k, 'exact', exact(x,y))
ties_exact = {'ties4': ([1,2,2,3],[2,3,3,4]), 'ties6': ([5,5,6,7,7,8],[7,8,8,9,9,9]),
        'five': ([1.00]*5, [0.97]*5), 'same': ([3,3,3],[3,3,3])}
for k,(x,y) in ties_exact.items(): print(k, 'exact', '%.17g %.17g' % exact_ties(x,y))
ties = {'ties4': ([1,2,2,3],[2,3,3,4]), 'ties6': ([5,5,6,7,7,8],[7,8,8,9,9,9]),
        'big': ([i for i in range(31)], [i + 10.5 for i in range(31)]),
        'same': ([3,3,3],[3,3,3])}
for k,(x,y) in ties.items():
    try: print(k, 'normal', '%.17g %.17g' % normal(x,y))
    except ZeroDivisionError: print(k, 'var 0')
