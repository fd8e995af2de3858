"""Boilerplate removal on or off: near-duplicate pairs on the sandbox against its truth.

Every HTML page of the harder sandbox (``build_world(0, hard_mirrors=True)``) is
canonicalised and sketched twice, as is and with each host's repeated blocks removed
(``detectors.boilerplate``, fitted on all pages: the offline, exact form), then clustered
at resemblance 0.8 (the crawl's threshold) and 0.5 (Broder's) with ``detectors.clustering``. A pair is right when the two pages are a
page and its copy on a true mirror (same relative path under the mirror's prefix) or
have identical text; every other pair is a false near-duplicate — same-site pairs that
share only navigation are what Henzinger (2006) saw hurt precision.

    python benchmarks/boilerplate.py

Last line, at 0.5: ``off_precision=P off_recall=R on_precision=P on_recall=R``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mirrorscope.sandbox import build_world  # noqa: E402
from mirrorscope.detectors.boilerplate import BoilerplateFilter  # noqa: E402
from mirrorscope.detectors.canonical import canonical_document  # noqa: E402
from mirrorscope.detectors.clustering import cluster_sketches  # noqa: E402
from mirrorscope.detectors.sketch import sketch_many  # noqa: E402

PORT = 8080


def pages(world) -> list[tuple[str, str, object]]:
    truth = world.ground_truth(PORT)
    found = []
    for url in truth["html_pages"]:
        host, path = url.split("/", 3)[2].split(":")[0], "/" + url.split("/", 3)[3]
        resource = world.host(host).resolve(path)
        found.append((host, path, canonical_document(resource.at_port(PORT).body.decode("utf-8", "replace"))))
    return found


def true_pairs(world, docs) -> set[frozenset[int]]:
    truth = world.ground_truth(PORT)
    index = {(h, p): i for i, (h, p, _) in enumerate(docs)}
    right = set()
    for m in truth["mirrors"]:
        (ha, pa), (hb, pb) = (("/".join(u.split("/")[2:3]).split(":")[0], "/" + u.split("/", 3)[3]) for u in (m["a"], m["b"]))
        for (h, p), i in index.items():
            if h == ha and p.startswith(pa):
                j = index.get((hb, pb + p[len(pa):]))
                if j is not None:
                    right.add(frozenset((i, j)))
    return right


def score(token_lists, docs, right, threshold: float) -> tuple[float, float]:
    sketches = sketch_many(token_lists)
    offsets = np.zeros(len(sketches) + 1, dtype=np.int64)
    np.cumsum([k.min_s.size for k in sketches], out=offsets[1:])
    values = np.concatenate([k.min_s for k in sketches]).astype(np.uint64)
    whole = np.asarray([k.fingerprint for k in sketches], dtype=np.uint64)
    clusters = cluster_sketches(np.arange(len(sketches)), offsets, values, document_fingerprints=whole, threshold=threshold)
    found = {frozenset((int(i), int(j))) for i, j in zip(clusters.i, clusters.j)}
    # Identical pages collapse before pairing: count them as pairs too.
    for i, label in enumerate(clusters.identical.tolist()):
        if label != i:
            found.add(frozenset((i, label)))
    identical_text = {p for p in found if len({" ".join(docs[k][2].tokens) for k in p}) == 1}
    good = {p for p in found if p in right or p in identical_text}
    precision = len(good) / len(found) if found else 1.0
    recall = len(found & right) / len(right) if right else 1.0
    return precision, recall


def main() -> None:
    world = build_world(0, hard_mirrors=True)
    docs = pages(world)
    right = true_pairs(world, docs)
    plain = [d.tokens for _, _, d in docs]
    boiler = BoilerplateFilter()
    for host, _, doc in docs:
        boiler.observe(host, doc.blocks())
    stripped = [boiler.strip(host, doc.blocks()) for host, _, doc in docs]
    removed = 1 - sum(map(len, stripped)) / max(sum(map(len, plain)), 1)
    print(f"{len(docs)} pages, {len(right)} true copy pairs; boilerplate is {removed:.1%} of the tokens")
    for threshold in (0.8, 0.5):
        off = score(plain, docs, right, threshold)
        on = score(stripped, docs, right, threshold)
        print(f"resemblance >= {threshold}: kept precision {off[0]:.3f} recall {off[1]:.3f}; removed precision {on[0]:.3f} recall {on[1]:.3f}")
    print(f"off_precision={off[0]:.3f} off_recall={off[1]:.3f} on_precision={on[0]:.3f} on_recall={on[1]:.3f}")


if __name__ == "__main__":
    main()
