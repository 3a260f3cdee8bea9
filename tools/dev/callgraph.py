#!/usr/bin/env python3
"""The file-level call graph of seekless's libraries, and its loops.

    tools/dev/callgraph.py [--nm NM] [--show] [--folders indexer,db] BUILD_DIR
    tools/dev/callgraph.py [--nm NM] [--show] [--folders indexer,db] OBJECT...

Reads the object files of seekless's libraries with nm: those CMake's
$<TARGET_OBJECTS> names (the CTest test), or the members of the libsl_*.a
archives of BUILD_DIR (objects a moved source left behind are not
members).  A file that references a symbol it leaves undefined depends on
the file that defines it.  Calls, and data a file
reads from another, are edges alike; a function pointer handed at run time
(the pipeline's sink, the formats' table) is not, and need not be: what
the rule is about is which file must know which.

Exits 1 when files of the folders (default: indexer db) reach each other,
directly or through files of other folders, and names each loop and the
symbols that close it; 0 when every call among them runs one way
(docs/design.md, "The house").  --show prints every edge as well."""
import argparse
import collections
import glob
import os
import subprocess
import sys


def source_of(obj):
    """indexer/formats/exif.c for .../CMakeFiles/sl_indexer.dir/indexer/formats/exif.c.o"""
    parts = os.path.abspath(obj).split(os.sep)
    lib = max(i for i, d in enumerate(parts) if d.endswith(".dir"))
    src = "/".join(parts[lib + 1:])
    return src.rsplit(".", 1)[0]


def archived(build):
    """The objects of BUILD_DIR's libsl_*.a, found under their CMakeFiles folders."""
    out = []
    for lib in sorted(glob.glob(os.path.join(build, "libsl_*.a"))):
        name = os.path.basename(lib)[len("lib"):-len(".a")]
        tree = os.path.join(build, "CMakeFiles", name + ".dir")
        members = subprocess.run(["ar", "t", lib], capture_output=True, text=True,
                                 check=True).stdout.split()
        for member in members:
            found = glob.glob(os.path.join(tree, "**", member), recursive=True)
            if len(found) > 1:  # a stale copy beside the current one: the archive's bytes tell
                data = subprocess.run(["ar", "p", lib, member], capture_output=True,
                                      check=True).stdout
                found = [f for f in found if open(f, "rb").read() == data]
            if len(found) != 1:
                sys.exit("callgraph: %s of %s not found once under %s" % (member, lib, tree))
            out.append(found[0])
    return out


def symbols(nm, obj):
    """(defined, undefined) external symbols of one object file."""
    res = subprocess.run([nm, "-g", obj], capture_output=True, text=True, check=True)
    defined, undefined = set(), set()
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] not in ("U", "w", "v"):
            defined.add(parts[2])
    return defined, undefined


def loops(graph):
    """Strongly connected components of more than one file (Tarjan's, without recursion)."""
    index, low, on, stack, sccs = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        sccs.append(sorted(comp))
    return sccs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nm", default=os.environ.get("NM", "nm"))
    ap.add_argument("--show", action="store_true")
    ap.add_argument("--folders", default="indexer,db")
    ap.add_argument("inputs", nargs="+", metavar="BUILD_DIR|OBJECT")
    args = ap.parse_args()
    args.folders = args.folders.split(",")

    paths = []
    for arg in args.inputs:
        for i in filter(None, arg.split(";")):  # $<TARGET_OBJECTS> comes as one ;-list
            paths += archived(i) if os.path.isdir(i) else [i]
    objs = {source_of(o): o for o in paths}
    if not any(src.split("/")[0] in args.folders for src in objs):
        sys.exit("callgraph: no object file of %s in %s" % (" ".join(args.folders),
                                                            " ".join(args.inputs)))
    definer, refs = {}, {}
    for src, obj in sorted(objs.items()):
        defined, undefined = symbols(args.nm, obj)
        for s in defined:
            definer.setdefault(s, src)
        refs[src] = undefined
    # edge a -> b, with the symbols a takes from b
    why = collections.defaultdict(set)
    graph = {src: set() for src in objs}
    for a, undefined in refs.items():
        for s in undefined:
            b = definer.get(s)
            if b and b != a:
                graph[a].add(b)
                why[(a, b)].add(s)
    if args.show:
        for a in sorted(graph):
            for b in sorted(graph[a]):
                print("%s -> %s: %s" % (a, b, " ".join(sorted(why[(a, b)]))))

    bad = [c for c in loops(graph) if any(f.split("/")[0] in args.folders for f in c)]
    for comp in bad:
        members = set(comp)
        print("loop of %d files: %s" % (len(comp), " ".join(comp)))
        for a in comp:
            for b in sorted(graph[a] & members):
                print("  %s -> %s: %s" % (a, b, " ".join(sorted(why[(a, b)]))))
    scope = sorted(src for src in objs if src.split("/")[0] in args.folders)
    if bad:
        print("callgraph: %d loop(s) among the files of %s" % (len(bad), " ".join(args.folders)))
        return 1
    print("callgraph: %d files of %s, %d edges, no loop" % (
        len(scope), " ".join(args.folders),
        sum(len(graph[a]) for a in scope)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
