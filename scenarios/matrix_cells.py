"""The scenario matrix's results as cells: reads the JSON documents of `hybrio
compare` that scenarios/matrix.sh writes (one directory per filesystem) and the job
files they ran, and says per cell which engine is the best static one, which is the
p99 reference, and how adaptive's rounds pair with theirs. matrix_report.py writes
RESULTS.md from them; matrix_helper.py plans the confirmation stage with them.
Standard library only.
"""

import json
import math
import os
import statistics
import sys

ADAPTIVE = "adaptive"
# Engines that serve one request at a time per job: at depth > 1 the job's other
# requests wait in the caller, where their latency is not counted.
SYNC_ENGINES = ("psync", "sync", "pvsync2")
# The order of the filesystems' sections; others follow by name.
FS_ORDER = ("ext4", "xfs", "btrfs", "tmpfs", "fastdev")
# The files of a results directory that are not compare documents.
SIDE_FILES = {"machine.json", "kernel.json", "plan.json"}


def is_true(value):
    return value.strip().lower() not in ("0", "false", "no", "off", "")


def parse_job_file(path):
    """Splits a fio job file into groups, as hybrio does (stonewall/new_group start one);
    returns one dict per group: its section names ("names"), requests in flight of the
    group ("in_flight", None when jobs join mid-run), the deepest job's iodepth
    ("depth") and each job's options with the globals applied ("jobs")."""
    sections = []
    current = None
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                current = {"name": line[1:-1].strip(), "opts": {}}
                sections.append(current)
                continue
            if current is None:
                continue
            key, _, value = line.partition("=")
            current["opts"][key.strip()] = value.strip() if _ else "1"
    groups = []
    defaults = {}
    for section in sections:
        if section["name"] == "global":
            defaults.update(section["opts"])
            continue
        opts = dict(defaults, **section["opts"])
        starts = is_true(opts.get("stonewall", "0")) or is_true(opts.get("new_group", "0"))
        if not groups or starts:
            groups.append({"names": [], "in_flight": 0, "depth": 1, "jobs": []})
        group = groups[-1]
        group["names"].append(section["name"])
        group["jobs"].append(opts)
        depth = int(opts.get("iodepth", "1"))
        group["depth"] = max(group["depth"], depth)
        group["in_flight"] += depth * int(opts.get("numjobs", "1"))
        if opts.get("startdelay", "0") not in ("0", ""):
            # Jobs join mid-run: no one in-flight count holds for the whole cell.
            group["varies"] = True
    for group in groups:
        if group.pop("varies", False):
            group["in_flight"] = None
    return groups


def median(values):
    values = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return statistics.median(values) if values else None


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def spread(samples, key):
    """(max - min) / median of one figure over the rounds, in percent."""
    values = [s.get(key) for s in samples or [] if s.get(key) is not None]
    if len(values) < 2:
        return None
    mid = statistics.median(values)
    return (max(values) - min(values)) / mid * 100 if mid else None


def merged_result(result, stages):
    """An engine's result (`result`, from the first stage) over the rounds of every
    stage: medians of each figure the rounds carry, paths summed."""
    engine = result["engine"]
    samples = [x for stage in stages for x in stage.get(engine) or []]
    merged = dict(result, samples=samples)
    for key in {k for x in samples for k in x if k != "paths"}:
        merged[key] = median([x.get(key) for x in samples])
    later = [x.get("paths") for stage in stages[1:] for x in stage.get(engine) or []]
    paths = [p for p in [result.get("paths")] + later if p]
    if paths:
        merged["paths"] = {k: sum(p.get(k, 0) for p in paths) for k in paths[0]}
    return merged


def read_json(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


class Cell:
    """One cell of one job file on one filesystem, with what the report needs from it."""

    def __init__(self, fs, stem, doc, raw, group, confirm=None):
        self.fs = fs
        self.stem = stem
        self.name = raw.get("name", "?")
        self.description = raw.get("description") or ""
        self.in_flight = group["in_flight"] if group else None
        self.depth = group["depth"] if group else None
        self.results = {r["engine"]: r for r in raw.get("results", [])}
        self.engines = [e for e in doc.get("engines", []) if e in self.results] or list(self.results)
        # The rounds of each stage, per engine: pairs are formed within a stage only.
        self.stages = [{e: r.get("samples") or [] for e, r in self.results.items()}]
        if confirm is not None:
            self.stages.append({r["engine"]: r.get("samples") or [] for r in confirm.get("results", [])})
            for engine in self.stages[1]:
                if engine in self.results:
                    self.results[engine] = merged_result(self.results[engine], self.stages)
        static = [e for e in self.engines if e != ADAPTIVE]
        best = raw.get("best_static")
        if best not in self.results or confirm is not None:
            # As the compare subcommand defines it: the non-adaptive engine with the highest
            # median IOPS (over both stages' rounds, when there are two).
            best = max(static, key=lambda e: self.results[e].get("iops") or 0, default=None)
        self.best_static = best
        self.static = static
        self.reference = self.p99_reference()

    def p99_reference(self):
        """The engine whose p99 adaptive's is held against. At depth > 1 a synchronous
        engine serves one request at a time while the job's others wait in the caller,
        uncounted by its latency, so its p99 is that of a depth-1 run: the reference is
        the best-IOPS engine among those that keep the depth in flight (None if no
        such engine ran). At depth 1 all engines are alike in this: the best static."""
        if (self.depth or 1) <= 1:
            return self.best_static
        keeping = [e for e in self.static if e not in SYNC_ENGINES]
        return max(keeping, key=lambda e: self.results[e].get("iops") or 0, default=None)

    def rounds(self, engine):
        return sum(len(stage.get(engine) or []) for stage in self.stages)

    def figure(self, engine, key):
        r = self.results.get(engine)
        return None if r is None else r.get(key)

    def paired(self, engine, other, key):
        """The median over the rounds of engine's figure over other's in the same round:
        the engines of one round ran back to back, so a change in what else the machine
        did between rounds cancels out. Falls back to the ratio of the medians when the
        rounds are not in the document."""
        pairs = []
        for stage in self.stages:
            mine = [x.get(key) for x in stage.get(engine) or []]
            theirs = [x.get(key) for x in stage.get(other) or []]
            if len(mine) == len(theirs):
                pairs += [a / b for a, b in zip(mine, theirs) if a is not None and b]
        if pairs:
            return median(pairs)
        return ratio(self.figure(engine, key), self.figure(other, key))

    def app_lat(self, engine):
        """Requests in flight / IOPS (Little's law): what an application keeping that
        many requests outstanding waits per request, its own queueing included."""
        iops = self.figure(engine, "iops")
        if not iops or not self.in_flight:
            return None
        return self.in_flight / iops * 1e6

    def best_iops(self):
        return max((self.figure(e, "iops") or 0 for e in self.engines), default=None)


def is_compare_doc(path):
    try:
        doc = read_json(path)
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and "cells" in doc


def load_cells(fs, results_dir, jobs_dir):
    """[(document, Cell)] of one filesystem's directory."""
    cells = []
    for entry in sorted(os.listdir(results_dir)):
        path = os.path.join(results_dir, entry)
        if not entry.endswith(".json") or entry in SIDE_FILES or not is_compare_doc(path):
            continue
        stem = entry[: -len(".json")]
        doc = read_json(path)
        confirm_doc = read_json(os.path.join(results_dir, "confirm", entry))
        confirm = {}
        if confirm_doc is not None:
            doc["confirm_rounds"] = confirm_doc.get("rounds")
            confirm = {c.get("name"): c for c in confirm_doc.get("cells", [])}
        job_path = os.path.join(jobs_dir, stem + ".fio")
        groups = parse_job_file(job_path) if os.path.exists(job_path) else []
        for index, raw in enumerate(doc.get("cells", [])):
            group = next((g for g in groups if raw.get("name") in g["names"]), None)
            if group is None and index < len(groups):
                group = groups[index]
            cells.append((doc, Cell(fs, stem, doc, raw, group, confirm.get(raw.get("name")))))
    return cells


class Filesystem:
    """One filesystem's results directory: machine.json (the machine and how the
    filesystem was set up), plan.json (what was checked, skipped and why), kernel.json
    (the io_uring probe) and the compare documents."""

    def __init__(self, name, path, jobs_dir):
        self.name = name
        self.path = path
        self.machine = read_json(os.path.join(path, "machine.json")) or {}
        self.plan = read_json(os.path.join(path, "plan.json")) or {}
        self.kernel = read_json(os.path.join(path, "kernel.json"))
        loaded = load_cells(name, path, jobs_dir)
        self.docs = list({id(d): d for d, _ in loaded}.values())
        self.cells = [c for _, c in loaded]

    def skipped(self):
        """[(stem, cell name, reason)] of what plan.json says was not run here."""
        return [
            (s.get("job", "?"), cell, s.get("reason", "no reason recorded"))
            for s in self.plan.get("skipped", [])
            for cell in s.get("cells") or ["(whole file)"]
        ]

    def notes_for(self, cell):
        return [
            n.get("note", "")
            for n in self.plan.get("notes", [])
            if n.get("job") == cell.stem and (not n.get("cells") or cell.name in n["cells"])
        ]


def fs_order(name):
    return (FS_ORDER.index(name) if name in FS_ORDER else len(FS_ORDER), name)


def find_filesystems(results_dir, jobs_dir):
    """One Filesystem per subdirectory of results_dir (scenarios/results/<fs>/); the
    flat layout of before (the documents in results_dir itself) is one more, named by
    its machine.json, unless a subdirectory has that name (a run since then)."""
    entries = sorted(os.listdir(results_dir))
    found = []
    for entry in entries:
        path = os.path.join(results_dir, entry)
        if entry == "confirm" or not os.path.isdir(path):
            continue
        if any(e.endswith(".json") for e in os.listdir(path)):
            found.append(Filesystem(entry, path, jobs_dir))
    flat = any(
        e.endswith(".json") and e not in SIDE_FILES and is_compare_doc(os.path.join(results_dir, e))
        for e in entries
    )
    if flat:
        machine = read_json(os.path.join(results_dir, "machine.json")) or {}
        name = machine.get("fs") or machine.get("fstype") or "scratch"
        if any(fs.name == name for fs in found):
            print(
                f"matrix_report.py: ignoring the documents in {results_dir} itself: {name}/ beside them is newer",
                file=sys.stderr,
            )
        else:
            found.append(Filesystem(name, results_dir, jobs_dir))
    return sorted(found, key=lambda fs: fs_order(fs.name))
