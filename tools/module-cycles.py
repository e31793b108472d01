#!/usr/bin/env python3
"""Finds import circles among a Rust crate's own modules.

Usage: tools/module-cycles.py [--edges] [--quiet] [--max-edges N] [--no-follow] SRC_DIR...
       tools/module-cycles.py --self-test

Each SRC_DIR is a crate's src/ directory. Each crate root in it (lib.rs,
main.rs, bin/*.rs) is checked on its own: a binary beside a library reaches
the library as an extern crate, so its `mod` tree is a graph of its own.

A module is a file (foo.rs or foo/mod.rs is `foo`; the root is `crate`);
inline `mod x { }` blocks belong to their file's module. Code under a cfg
that needs `test` (or `doctest`) is left out, and so is every file declared
only there: the question is whether the non-test code has circles.

An edge A -> B is a reference from A's code to B: a `mod b;` declaration,
a `use` (grouped, glob, renamed, `pub use`), or an inline path such as
`crate::b::f()` or `super::b::T`. A path is resolved to the longest prefix
that is a known module; where that module only imports or re-exports the
name (`crate::Error` from lib.rs's `pub use error::Error`), the edge goes on
to the module the name comes from, as that is the code depended on
(--no-follow stops at the prefix). Every strongly connected component of
more than one module is printed with edges inside it: edges up or across
the tree first (a parent reaching down to its child is the tree itself),
fewest references first, as those are usually the cheapest to cut.
Exit status: 1 if any component, 0 if none, 2 on a usage error.

Not seen: paths inside string literals and attributes' strings (stripped
with comments), textually scoped `macro_rules!` used without a path, and
`pub(in path)` visibilities, which name an ancestor without depending on it.
"""

import argparse
import io
import os
import re
import shutil
import sys
import tempfile
from collections import defaultdict, namedtuple

IDENT_START = re.compile(r"[A-Za-z_]")
IDENT_CHAR = re.compile(r"[A-Za-z0-9_]")


def strip_comments_and_strings(text):
    """Blanks comments, strings and char literals, keeping every newline so
    that offsets and line numbers stay those of the file."""
    out = list(text)
    n = len(text)
    i = 0

    def blank(a, b):
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    def prev_is_ident(k):
        return k > 0 and IDENT_CHAR.match(text[k - 1]) is not None

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
            continue
        if text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
            continue
        # Raw strings: r"..", r#".."#, br#".."#, cr".." (not raw idents r#x).
        m = re.compile(r'(?:b|c)?r(#*)"').match(text, i)
        if m and not prev_is_ident(i):
            close = '"' + m.group(1)
            j = text.find(close, m.end())
            j = n if j < 0 else j + len(close)
            blank(i, j)
            i = j
            continue
        if c == '"' or (c in "bc" and text.startswith('"', i + 1) and not prev_is_ident(i)):
            j = i + (1 if c == '"' else 2)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
            continue
        if c == "'" or (c == "b" and text.startswith("'", i + 1) and not prev_is_ident(i)):
            q = i if c == "'" else i + 1
            # A char literal, unlike a lifetime, closes: 'a', '\n', '\u{..}'.
            m = re.compile(r"'(?:\\(?:u\{[0-9a-fA-F_]*\}|x..|.)|[^\\'\n])'").match(text, q)
            if m:
                blank(i, m.end())
                i = m.end()
                continue
            i = q + 1
            continue
        if IDENT_START.match(c):
            j = i + 1
            while j < n and IDENT_CHAR.match(text[j]):
                j += 1
            i = j
            continue
        i += 1
    return "".join(out)


TOKEN = re.compile(
    r"\$?(?:r#)?[A-Za-z_][A-Za-z0-9_]*"  # identifiers, keywords, $crate
    r"|::|=>|->|'[A-Za-z_][A-Za-z0-9_]*"  # paths, arms, lifetimes
    r"|[0-9][A-Za-z0-9_.]*"
    r"|\S"
)


Token = namedtuple("Token", "text line")


def tokenize(stripped):
    tokens = []
    line = 1
    pos = 0
    for m in TOKEN.finditer(stripped):
        line += stripped.count("\n", pos, m.start())
        pos = m.start()
        t = m.group()
        if t.startswith("r#"):
            t = t[2:]
        elif t == "$crate":
            t = "crate"
        tokens.append(Token(t, line))
    return tokens


OPEN = {"(": ")", "[": "]", "{": "}"}
CLOSE = {")", "]", "}"}
ITEM_KEYWORDS = {"fn", "impl", "struct", "enum", "trait", "mod", "union", "macro_rules"}
QUALIFIERS = {"pub", "unsafe", "async", "const", "extern", "default", "auto"}
# Tokens after a closing brace that keep an expression going.
CONTINUES = {"else", ".", "?", "=>", "as", "+", "-", "*", "/", "%", "&", "|", "^", "=", "<", ">", "!"}


def cfg_needs_test(tokens, i, end):
    """Whether the cfg predicate in tokens[i:end] can hold only under test."""

    def parse(k):
        t = tokens[k].text
        if k + 1 < end and tokens[k + 1].text == "(":
            args, k = [], k + 2
            while k < end and tokens[k].text != ")":
                if tokens[k].text == ",":
                    k += 1
                    continue
                v, k = parse(k)
                args.append(v)
            k += 1
            if t == "all":
                return any(args), k
            if t == "any":
                return bool(args) and all(args), k
            return False, k  # not(..) and anything unknown
        k += 1
        if k < end and tokens[k].text == "=":
            return False, k + 1
        return t in ("test", "doctest"), k

    try:
        return parse(i)[0]
    except IndexError:
        return False


def attribute_end(tokens, i):
    """tokens[i] is '#'; returns the index past the attribute's ']'."""
    j = i + 1
    if j < len(tokens) and tokens[j].text == "!":
        j += 1
    if j >= len(tokens) or tokens[j].text != "[":
        return i + 1
    depth = 0
    while j < len(tokens):
        t = tokens[j].text
        if t in OPEN:
            depth += 1
        elif t in CLOSE:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return j


def is_test_cfg(tokens, i, end):
    """Whether the attribute tokens[i:end] is #[cfg(..)] that needs test."""
    j = i + 1
    if tokens[j].text == "!":
        j += 1
    return (
        j + 2 < end
        and tokens[j + 1].text == "cfg"
        and tokens[j + 2].text == "("
        and cfg_needs_test(tokens, j + 3, end - 2)
    )


def item_end(tokens, i):
    """The index past the item, statement, field, variant or arm that
    starts at tokens[i] (after its attributes)."""
    n = len(tokens)
    while i < n and tokens[i].text == "#":
        i = attribute_end(tokens, i)
    k = i
    while k < n and tokens[k].text in QUALIFIERS:
        k += 1
        if k < n and tokens[k].text == "(" and tokens[k - 1].text == "pub":
            while k < n and tokens[k].text != ")":
                k += 1
            k += 1
    head = tokens[k].text if k < n else ""
    is_item = head in ITEM_KEYWORDS
    # Declarations end at their semicolon; fields, variants and match arms
    # at a comma, which a type's generics may also hold: `HashMap<K, V>,`.
    to_semicolon = head in ("let", "static", "type", "use") or (k > i and tokens[i].text == "const")
    depth = angle = 0
    j = i
    while j < n:
        t = tokens[j].text
        if t == "<" and j > i and (tokens[j - 1].text == "::" or tokens[j - 1].text[:1].isupper()):
            angle += 1
        elif t == ">" and angle:
            angle -= 1
        elif t in OPEN:
            depth += 1
        elif t in CLOSE:
            if depth == 0:
                return j  # the enclosing block ends here
            depth -= 1
            if depth == 0 and t == "}":
                if is_item:
                    return j + 1
                nxt = tokens[j + 1].text if j + 1 < n else ""
                if nxt in (";", ","):
                    return j + 2
                if nxt not in CONTINUES:
                    return j + 1
        elif depth == 0 and (t == ";" or (t == "," and angle == 0 and not is_item and not to_semicolon)):
            return j + 1
        j += 1
    return n


def test_only_mask(tokens):
    """A list of booleans: True for tokens that exist only under test. The
    first element of the return is whether the whole file is test-only."""
    n = len(tokens)
    mask = [False] * n
    whole = False
    i = 0
    while i < n:
        if tokens[i].text == "#" and i + 1 < n and tokens[i + 1].text in ("[", "!"):
            end = attribute_end(tokens, i)
            if is_test_cfg(tokens, i, end):
                if tokens[i + 1].text == "!":
                    whole = True  # #![cfg(test)] at the head of a file
                else:
                    stop = item_end(tokens, end)
                    for k in range(i, stop):
                        mask[k] = True
                    i = stop
                    continue
            i = end
            continue
        i += 1
    return whole, mask


class SourceFile:
    """One file's non-test tokens, each with the module it lies in (the
    file's module plus any inline `mod x { }` around it)."""

    def __init__(self, path, module):
        self.path = path
        self.module = module
        with open(path, encoding="utf-8", errors="replace") as f:
            tokens = tokenize(strip_comments_and_strings(f.read()))
        self.test_only, mask = test_only_mask(tokens)
        self.tokens = [t for t, m in zip(tokens, mask) if not m]
        self.scope = []  # per token: module path tuple
        self.inline = []  # inline module paths declared in this file
        self.decls = []  # (declaring module, name, line) for `mod name;`
        stack = []  # (brace depth at which the inline module's body opened, path)
        depth = 0
        toks = self.tokens
        for k, t in enumerate(toks):
            cur = stack[-1][1] if stack else module
            self.scope.append(cur)
            if t.text == "{":
                depth += 1
                if k >= 2 and toks[k - 2].text == "mod":
                    path = cur + (toks[k - 1].text,)
                    stack.append((depth, path))
                    self.inline.append(path)
                    self.scope[k] = path
            elif t.text == "}":
                if stack and stack[-1][0] == depth:
                    stack.pop()
                depth -= 1
            elif (
                t.text == "mod"
                and k + 2 < len(toks)
                and toks[k + 2].text == ";"
                and IDENT_START.match(toks[k + 1].text)
            ):
                self.decls.append((cur, toks[k + 1].text, t.line))
        parse_uses(self)


DEFINING = {"fn", "struct", "enum", "trait", "type", "const", "static", "union"}


class Crate:
    """A crate root's module tree and what each module defines and imports."""

    def __init__(self, root_file, follow_reexports=True):
        self.root_file = root_file
        self.follow = follow_reexports
        self.files = {}  # module path -> SourceFile
        self.owner = {}  # module path (file or inline) -> file module path
        self.children = defaultdict(set)  # module path -> child names
        self.defined = defaultdict(set)  # module path -> item names
        self.imports = {}  # (module path, name) -> absolute path
        self.globs = defaultdict(list)  # module path -> glob-imported modules
        self._discover(root_file, ())
        self._index()

    def _discover(self, path, module):
        src = SourceFile(path, module)
        if src.test_only:
            return None
        self.files[module] = src
        self.owner[module] = module
        for inline in src.inline:
            self.owner[inline] = module
            self.children[inline[:-1]].add(inline[-1])
        base = os.path.dirname(path)
        filename = os.path.basename(path)
        if module and filename != "mod.rs":
            base = os.path.join(base, os.path.splitext(filename)[0])
        for parent, child, _line in src.decls:
            d = os.path.join(base, *parent[len(module) :])
            for cand in (os.path.join(d, child + ".rs"), os.path.join(d, child, "mod.rs")):
                if os.path.isfile(cand):
                    if self._discover(cand, parent + (child,)) is not None:
                        self.children[parent].add(child)
                    break
        return src

    def _index(self):
        for src in self.files.values():
            toks = src.tokens
            for k, t in enumerate(toks[:-1]):
                nxt = toks[k + 1].text
                if t.text in DEFINING and IDENT_START.match(nxt) and nxt != "fn":
                    self.defined[src.scope[k]].add(nxt)
                elif t.text == "macro_rules" and nxt == "!" and k + 2 < len(toks):
                    self.defined[src.scope[k]].add(toks[k + 2].text)
        # An import may go through another (`use stats::hist` after
        # `use crate::stats`), in any order, so settle them to a fixed point.
        changed, rounds = True, 0
        while changed and rounds < 32:
            changed, rounds = False, rounds + 1
            for src in self.files.values():
                for use in src.uses:
                    for segs, rename, _line in use.leaves:
                        full = self.absolute(segs, use.scope)
                        if full is None or rename == "_":
                            continue
                        if rename == "*":
                            if full in self.owner and full not in self.globs[use.scope]:
                                self.globs[use.scope].append(full)
                                changed = True
                        elif self.imports.get((use.scope, rename)) != full:
                            self.imports[(use.scope, rename)] = full
                            changed = True

    def absolute(self, segs, scope):
        """The absolute path segs names from scope, if it is this crate's."""
        first = segs[0]
        if first == "crate":
            return tuple(segs[1:])
        if first in ("self", "super"):
            base, k = scope, 0
            while k < len(segs) and segs[k] in ("self", "super"):
                if segs[k] == "super":
                    if not base:
                        return None
                    base = base[:-1]
                k += 1
            return tuple(base) + tuple(segs[k:])
        if first in self.children.get(scope, ()):
            return tuple(scope) + tuple(segs)
        if (scope, first) in self.imports:
            return self.imports[(scope, first)] + tuple(segs[1:])
        for g in self.globs.get(scope, ()):
            if first in self.children.get(g, ()) or (g, first) in self.imports:
                return tuple(g) + tuple(segs)
        return None

    def module_of(self, full, hops=0):
        """The file module that defines what the absolute path names: the
        longest prefix that is a module, and, through imports and re-exports
        there, the module the name comes from."""
        k = len(full)
        while full[:k] not in self.owner:
            k -= 1
        here = full[:k]
        if self.follow and k < len(full) and hops < 16:
            item = full[k]
            if (here, item) in self.imports:
                target = self.imports[(here, item)]
                if target != full[: k + 1]:
                    return self.module_of(target + full[k + 1 :], hops + 1)
            elif item not in self.defined[here]:
                for g in self.globs.get(here, ()):
                    if item in self.defined[g] or (g, item) in self.imports:
                        return self.module_of(g + full[k:], hops + 1)
        return self.owner[here]

    def resolve(self, segs, scope):
        """The file module a path refers to, or None if not this crate's."""
        full = self.absolute(segs, scope)
        return None if full is None else self.module_of(full)


class Use:
    __slots__ = ("scope", "leaves", "public")

    def __init__(self, scope, leaves, public):
        self.scope = scope
        self.leaves = leaves
        self.public = public


def parse_uses(src):
    """Fills src.uses and src.in_use (tokens that belong to a use)."""
    toks = src.tokens
    n = len(toks)
    src.uses = []
    src.in_use = [False] * n
    for k, t in enumerate(toks):
        # `use<..>` is a precise-capturing bound; `use ::x` an extern crate.
        if t.text != "use" or (k + 1 < n and toks[k + 1].text in ("<", "::")):
            continue
        leaves = []
        end = parse_use_tree(toks, k + 1, [], leaves)
        while end < n and toks[end].text != ";":
            end += 1
        for j in range(k, min(end + 1, n)):
            src.in_use[j] = True
        public = k > 0 and toks[k - 1].text in ("pub", ")")
        src.uses.append(Use(src.scope[k], [leaf for leaf in leaves if leaf[0]], public))


def parse_use_tree(toks, i, prefix, leaves):
    """Parses a use tree at toks[i]; appends (segments, name, line) for
    each leaf (name '*' for a glob). Returns the index past the tree."""
    segs = list(prefix)
    n = len(toks)
    while i < n:
        t = toks[i]
        if t.text == "::":
            i += 1
        elif t.text == "{":
            i += 1
            while i < n and toks[i].text != "}":
                if toks[i].text == ",":
                    i += 1
                    continue
                i = parse_use_tree(toks, i, segs, leaves)
            return i + 1
        elif t.text == "*":
            leaves.append((segs, "*", t.line))
            return i + 1
        elif IDENT_START.match(t.text):
            segs = segs + [t.text]
            i += 1
            if i < n and toks[i].text == "as":
                leaves.append((segs, toks[i + 1].text, t.line))
                return i + 2
            if i >= n or toks[i].text != "::":
                if segs[-1] == "self" and len(segs) > 1:  # use a::{self}
                    segs = segs[:-1]
                leaves.append((segs, segs[-1], t.line))
                return i
        else:
            return i + 1
    return i


def crate_edges(crate):
    """{(from, to): [(file, line), ...]} over the crate's non-test code."""
    edges = defaultdict(list)

    def add(frm, to, src, line):
        if to is not None and to != frm:
            edges[(frm, to)].append((src.path, line))

    for module, src in crate.files.items():
        toks = src.tokens
        n = len(toks)
        for parent, child, line in src.decls:
            if child in crate.children.get(parent, ()):
                add(module, crate.owner[parent + (child,)], src, line)
        for use in src.uses:
            for segs, rename, line in use.leaves:
                full = crate.absolute(segs, use.scope)
                if full is None:
                    continue
                # A module imported by name is a dependency where its items
                # are used; the import itself counts only if re-exported.
                if (
                    full in crate.owner
                    and rename != "*"
                    and not use.public
                    and name_used_as_path(src, use.scope, rename)
                ):
                    continue
                add(module, crate.module_of(full), src, line)
        k = 0
        while k < n:
            t = toks[k]
            if (
                src.in_use[k]
                or not IDENT_START.match(t.text)
                or k + 1 >= n
                or toks[k + 1].text != "::"
                or (k > 0 and toks[k - 1].text == "::")
            ):
                k += 1
                continue
            if k >= 3 and [x.text for x in toks[k - 3 : k]] == ["pub", "(", "in"]:
                k += 1
                continue
            segs = [t.text]
            j = k + 1
            while j + 1 < n and toks[j].text == "::" and IDENT_START.match(toks[j + 1].text):
                segs.append(toks[j + 1].text)
                j += 2
            add(module, crate.resolve(segs, src.scope[k]), src, t.line)
            k = j
    return edges


def name_used_as_path(src, scope, first):
    toks = src.tokens
    for k, t in enumerate(toks[:-1]):
        if (
            t.text == first
            and src.scope[k] == scope
            and toks[k + 1].text == "::"
            and not (k > 0 and toks[k - 1].text == "::")
        ):
            return True
    return False


def strongly_connected(nodes, edges):
    """Tarjan's algorithm; returns lists of nodes. A crate's modules are
    few, so recursion is deep enough."""
    succ = defaultdict(list)
    for a, b in edges:
        succ[a].append(b)
    index, low, stack, comps = {}, {}, [], []
    sys.setrecursionlimit(max(1000, 4 * len(nodes) + 100))

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(succ[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while not comp or comp[-1] != v:
                comp.append(stack.pop())
            comps.append(comp)

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return comps


def name(module):
    return "::".join(module) if module else "crate"


def crate_roots(src_dir):
    roots = [os.path.join(src_dir, f) for f in ("lib.rs", "main.rs")]
    bin_dir = os.path.join(src_dir, "bin")
    if os.path.isdir(bin_dir):
        for f in sorted(os.listdir(bin_dir)):
            p = os.path.join(bin_dir, f)
            if f.endswith(".rs"):
                roots.append(p)
            elif os.path.isfile(os.path.join(p, "main.rs")):
                roots.append(os.path.join(p, "main.rs"))
    return [r for r in roots if os.path.isfile(r)]


def check(root_file, follow_reexports=True):
    """Returns (components, edges, crate); components sorted, each sorted."""
    crate = Crate(root_file, follow_reexports)
    edges = crate_edges(crate)
    comps = [sorted(c) for c in strongly_connected(crate.files.keys(), edges) if len(c) > 1]
    comps.sort(key=lambda c: (-len(c), c))
    return comps, edges, crate


def where(crate, path, line):
    rel = os.path.relpath(path, os.path.dirname(crate.root_file))
    return f"{rel}:{line}"


def report(root_file, opts, out):
    comps, edges, crate = check(root_file, not opts.no_follow)
    if opts.quiet:
        return len(comps)
    circles = f"{len(comps)} import circle{'s' if len(comps) != 1 else ''}"
    print(f"{root_file}: {len(crate.files)} modules, {len(edges)} edges, {circles}", file=out)
    if opts.edges:
        for (a, b), refs in sorted(edges.items()):
            print(f"  {name(a)} -> {name(b)}  {where(crate, *refs[0])}", file=out)
    for n, comp in enumerate(comps, 1):
        members = set(comp)
        inside = [(len(r), a, b, r[0]) for (a, b), r in edges.items() if a in members and b in members]
        # A parent reaching down to its own child is the tree itself; the
        # edges worth cutting go up or across, the thinnest first.
        inside.sort(key=lambda e: (e[2][: len(e[1])] == e[1], e[0], e[1], e[2]))
        print(f"  circle {n}: {len(comp)} modules, {len(inside)} edges", file=out)
        for m in comp:
            print(f"    {name(m)}", file=out)
        shown = inside[: opts.max_edges]
        print(f"   edges inside, up or across first ({len(shown)} of {len(inside)}):", file=out)
        for count, a, b, ref in shown:
            refs = f"{count} reference{'s' if count != 1 else ''}"
            print(f"    {name(a)} -> {name(b)}  {where(crate, *ref)}  ({refs})", file=out)
    return len(comps)


# --- self-test ------------------------------------------------------------

SELF_TEST_CRATES = {
    # A child using its parent through super:: while the parent declares it.
    "super_child": (
        {
            "lib.rs": "pub mod engine;\npub mod leaf;\n",
            "engine/mod.rs": "pub mod psync;\npub trait Engine {}\n",
            "engine/psync.rs": "use super::Engine;\npub struct P;\nimpl Engine for P {}\n",
            "leaf.rs": "pub fn f() {}\n",
        },
        [["engine", "engine::psync"]],
    ),
    # A grouped use closes a circle a <-> b::c; longest prefix picks b::c.
    "grouped": (
        {
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "pub(crate) use crate::{b::{c::C, D}, a as _};\npub struct A;\n",
            "b/mod.rs": "pub mod c;\npub struct D;\n",
            "b/c.rs": "pub struct C(pub crate::a::A);\n",
        },
        [["a", "b", "b::c"]],
    ),
    # An inline path in code, after `use crate::y;` aliasing a module.
    "inline": (
        {
            "lib.rs": "mod x;\nmod y;\nmod z;\n",
            "x.rs": "pub fn f() -> u32 { crate::y::g() }\n",
            "y.rs": "use crate::z;\npub fn g() -> u32 { z::h() }\n",
            "z.rs": "pub fn h() -> u32 { let s = \"crate::y::g\"; s.len() as u32 }\n"
            "pub fn k() { crate::x::f(); }\n",
        },
        [["x", "y", "z"]],
    ),
    # Test-only code would close circles; it must be left out.
    "test_only": (
        {
            "lib.rs": "mod p;\nmod q;\n#[cfg(test)]\nmod tests;\n",
            "p.rs": "pub struct P;\n#[cfg(test)]\nmod tests {\n    use crate::q::Q;\n}\n"
            "#[cfg(all(test, unix))]\nfn helper() -> crate::q::Q { todo!() }\n",
            "q.rs": "use crate::p::P;\npub struct Q {\n    #[cfg(test)]\n    back: crate::tests::T,\n"
            "    p: P,\n}\n",
            "tests.rs": "pub struct T;\nfn f() { crate::p::P; crate::q::Q; }\n",
        },
        [],
    ),
    # Comments naming crate::x are not references; a cfg(not(test)) is code.
    "comments": (
        {
            "lib.rs": "mod x;\nmod w;\n",
            "x.rs": "//! See crate::w::W.\n/// Like [`crate::w::W`].\npub struct X; /* crate::w */\n"
            "#[cfg(not(test))]\nfn f() -> char { '\"' }\n",
            "w.rs": "pub struct W(pub crate::x::X);\nconst S: &str = r#\"crate::x\"#;\n",
        },
        [],
    ),
    # A path through a re-export leads to the module that defines the
    # item: buf names crate::Error, which lib.rs takes from error.
    "reexport": (
        {
            "lib.rs": "mod buf;\nmod error;\nmod prelude;\npub use error::Error;\n",
            "buf.rs": "use crate::Error;\npub struct Buf;\nfn f() -> crate::prelude::Ok { todo!() }\n",
            "error.rs": "pub struct Error(crate::buf::Buf);\npub struct Ok;\n",
            "prelude.rs": "pub use crate::error::*;\n",
        },
        [["buf", "error"]],
    ),
    # Binary and library roots are separate trees; `self::`, inline modules
    # and `super` inside them resolve from where they stand.
    "bin_and_lib": (
        {
            "lib.rs": "pub mod m;\npub mod n;\n",
            "m.rs": "mod inner {\n    pub use super::super::n::N;\n}\npub use self::inner::N;\n",
            "n.rs": "pub struct N;\n",
            "main.rs": "mod cli;\nuse hybrio::m::N;\npub struct Opts;\nfn main() {}\n",
            "cli.rs": "use super::Opts;\n",
        },
        {"lib.rs": [], "main.rs": [["crate", "cli"]]},
    ),
}


def self_test():
    failures = 0
    tmp = tempfile.mkdtemp(prefix="module-cycles-")
    try:
        for crate_name, (files, expected) in SELF_TEST_CRATES.items():
            src = os.path.join(tmp, crate_name, "src")
            for rel, body in files.items():
                p = os.path.join(src, rel)
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "w") as f:
                    f.write(body)
            if not isinstance(expected, dict):
                expected = {"lib.rs": expected}
            for root, want in expected.items():
                comps, edges, _ = check(os.path.join(src, root))
                got = [[name(m) for m in c] for c in comps]
                if got != want:
                    failures += 1
                    print(f"FAIL {crate_name}/{root}: want {want}, got {got}")
                    for (a, b), refs in sorted(edges.items()):
                        print(f"    {name(a)} -> {name(b)} line {refs[0][1]}")
                else:
                    print(f"ok   {crate_name}/{root}: {got}")
        comps, _, _ = check(os.path.join(tmp, "reexport", "src", "lib.rs"), follow_reexports=False)
        got = [[name(m) for m in c] for c in comps]
        if got != [["crate", "buf", "error", "prelude"]]:
            failures += 1
            print(f"FAIL reexport --no-follow: got {got}")
        # The evidence the command line prints.
        src = os.path.join(tmp, "super_child", "src")
        opts = argparse.Namespace(quiet=False, edges=True, max_edges=10, no_follow=False)
        buf = io.StringIO()
        found = report(os.path.join(src, "lib.rs"), opts, buf)
        text = buf.getvalue()
        for want in ("engine::psync -> engine  engine/psync.rs:1", "engine -> engine::psync  engine/mod.rs:1"):
            if want not in text or found != 1:
                failures += 1
                print(f"FAIL report: {want!r} not in\n{text}")
    finally:
        shutil.rmtree(tmp)
    print("self-test:", "FAILED" if failures else "passed")
    return 1 if failures else 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src", nargs="*", help="a crate's src/ directory")
    ap.add_argument("--edges", action="store_true", help="print every edge with one line as evidence")
    ap.add_argument("--quiet", action="store_true", help="print only the number of circles")
    ap.add_argument("--max-edges", type=int, default=10, help="edges shown per circle (default 10)")
    ap.add_argument(
        "--no-follow",
        action="store_true",
        help="stop at the module a path names, not the one it re-exports from",
    )
    ap.add_argument("--self-test", action="store_true", help="check the checker on small fake crates")
    opts = ap.parse_args(argv)
    if opts.self_test:
        return self_test()
    if not opts.src:
        ap.error("name at least one src/ directory")
    total = 0
    for src in opts.src:
        roots = crate_roots(src)
        if not roots:
            print(f"{src}: no lib.rs, main.rs or bin/ here", file=sys.stderr)
            return 2
        for root in roots:
            total += report(root, opts, sys.stdout)
    if opts.quiet:
        print(total)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
