#!/usr/bin/env python3
# include_check.py - the layout's rules on includes, as TAP for prove: each
# folder of user/ includes only the folders it may (docs/development.md's
# table), and no module includes itself back through others (a module is
# a .c and its .h). A quoted include that names no header of the tree
# fails too: every one is resolved.
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
if len(sys.argv) > 1:
    ROOT = sys.argv[1]

MAY = {
    "core": {"core", "include"},
    "maps": {"core", "maps", "include", "skel"},
    "daemon": {"core", "maps", "daemon", "include", "skel"},
    "shedctl": {"core", "maps", "include", "skel"},
    "tools": {"core", "include"},
}

headers = {}   # header name -> folder
sources = []   # (folder, path)
for folder in MAY:
    d = os.path.join(ROOT, "user", folder)
    for name in sorted(os.listdir(d)):
        if name.endswith((".c", ".h")):
            sources.append((folder, os.path.join(d, name)))
            if name.endswith(".h"):
                if name in headers:
                    print("1..0 # two headers named %s" % name)
                    sys.exit(1)
                headers[name] = folder
for name in os.listdir(os.path.join(ROOT, "include")):
    headers.setdefault(name, "include")

bad = []
edges = {}
for folder, path in sources:
    mod = os.path.splitext(os.path.basename(path))[0]
    rel = os.path.relpath(path, ROOT)
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            h = m.group(1)
            if h.endswith(".skel.h"):
                to = "skel"
            elif h in headers:
                to = headers[h]
            else:
                bad.append("%s:%d: \"%s\" is no header of the tree" % (rel, n, h))
                continue
            if to not in MAY[folder]:
                bad.append("%s:%d: %s/ may not include %s (%s/)" % (rel, n, folder, h, to))
            if to in MAY and os.path.splitext(h)[0] != mod:
                edges.setdefault(mod, set()).add(os.path.splitext(h)[0])

# Cycles: strongly connected components of more than one module (Tarjan).
index, low, stack, on, comps = {}, {}, [], set(), []
sys.setrecursionlimit(10000)


def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on.add(v)
    for w in sorted(edges.get(v, ())):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            comps.append(sorted(comp))


for v in sorted(edges):
    if v not in index:
        visit(v)

print("1..2")
for b in bad:
    print("# " + b)
print("%s 1 - each folder of user/ includes only what it may (%d files)"
      % ("not ok" if bad else "ok", len(sources)))
for c in comps:
    print("# include cycle: " + " -> ".join(c))
print("%s 2 - no include cycle among %d modules, %d edges"
      % ("not ok" if comps else "ok", len({os.path.splitext(os.path.basename(p))[0]
                                           for _, p in sources}),
         sum(len(e) for e in edges.values())))
sys.exit(1 if bad or comps else 0)
