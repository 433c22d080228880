# Flat and inclusive sample counts from sampler.c output (bench/profile/lu-stats-profile.sh):
#   python3 symbolize.py SAMPLES    (SAMPLES.maps beside it; addr2line and readelf on PATH)
import sys, subprocess, collections, bisect, os
samples = sys.argv[1]
maps = []
for line in open(samples + '.maps'):
    parts = line.split()
    if len(parts) < 6 or 'x' not in parts[1]: continue
    lo, hi = (int(x, 16) for x in parts[0].split('-'))
    maps.append((lo, hi, int(parts[2], 16), parts[5]))
maps.sort()
starts = [m[0] for m in maps]
def locate(a):
    i = bisect.bisect_right(starts, a) - 1
    if i >= 0 and maps[i][0] <= a < maps[i][1]:
        lo, hi, off, path = maps[i]
        return path, a - lo + off
    return '?', a
rows = [[int(x, 16) for x in l.split()] for l in open(samples) if l.strip()]
want = collections.defaultdict(set)
for r in rows:
    for j, a in enumerate(r):
        p, o = locate(a if j == 0 else a - 1)
        want[p].add(o)
def loads(path):
    out = subprocess.run(['readelf', '-lW', path], capture_output=True, text=True).stdout
    segs = []
    for l in out.splitlines():
        f = l.split()
        if f and f[0] == 'LOAD':
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
    return segs
def to_vaddr(segs, o):
    for off, va, size in segs:
        if off <= o < off + size: return o - off + va
    return o
names = {}
for path, offs in want.items():
    offs = sorted(offs)
    segs = loads(path) if os.path.exists(path) else []
    vaddrs = [to_vaddr(segs, o) for o in offs]
    if not os.path.exists(path):
        for o in offs: names[(path, o)] = os.path.basename(path)
        continue
    out = subprocess.run(['addr2line', '-f', '-C', '-e', path] + [hex(v) for v in vaddrs], capture_output=True, text=True).stdout.split('\n')
    for k, o in enumerate(offs):
        fn = out[2 * k] if 2 * k < len(out) else '??'
        if fn == '??': fn = os.path.basename(path) + '+?'
        names[(path, o)] = fn[:150]
flat = collections.Counter(); incl = collections.Counter()
for r in rows:
    seen = set()
    for j, a in enumerate(r):
        n = names[locate(a if j == 0 else a - 1)]
        if j == 0: flat[n] += 1
        if n not in seen: incl[n] += 1; seen.add(n)
total = len(rows)
print(f'{total} samples')
print('--- flat'); [print(f'{c:7d} {100*c/total:5.1f}% {n}') for n, c in flat.most_common(45)]
print('--- inclusive'); [print(f'{c:7d} {100*c/total:5.1f}% {n}') for n, c in incl.most_common(70)]
