"""Issue 18 item 5's figures: the term vector database's size and the co-clustering's time.

Two parts:

- **vectors on the corpus** (no crawl): every page of the real-page corpus
  (``sandbox.realpages``, Debian's documentation packages) parsed to its canonical
  tokens (``detectors.canonical``), then made into term vectors by the crawl's own code
  (``crawler.term_vectors.make_vectors``, batches of 32 as the pipeline works, ids from
  an in-memory dictionary). Figures: stored bytes per page against the page's raw text
  (its canonical words joined by spaces, UTF-8; the HTML's bytes printed too) and
  against a plain layout of the same terms, an int32 id and a float32 weight each (8
  bytes a term: the baseline); terms per page; milliseconds per page to make a vector
  (median of ``--runs``).
- **co-clustering on the real-page world's store**: the real-page world
  (``build_real_world``) crawled with the defaults (SQLite), or ``--db`` a store crawled
  before; its stored vectors made into the tf·idf page-term matrix and co-clustered as
  ``mirror-report detect`` does (``jobs.topics``: k = 16, l = 32, 20 iterations, seed 0);
  seconds (median of ``--runs``, matrix building excluded) and the loss (information
  lost, nats) after the start and after each iteration.

    python benchmarks/term_vectors.py [--runs 3] [--db sqlite:///store.db] [--max-pages 6000]

Last line: ``term_vector_bytes_per_page=.. plain_bytes_per_page=.. raw_text_bytes_per_page=..
html_bytes_per_page=.. terms_per_page=.. vector_ms_per_page=.. stored_bytes_per_page=..
pages=.. terms=.. nonzeros=.. cocluster_s=.. iterations=.. loss_start=.. loss_end=..
mutual_information=.. load_start=.. load_end=..``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402

from mirrorscope.crawler.term_vectors import make_vectors  # noqa: E402
from mirrorscope.detectors.canonical import canonical_tokens  # noqa: E402
from mirrorscope.detectors.cocluster import cocluster, page_term_matrix  # noqa: E402
from mirrorscope.detectors.term_vectors import DocumentFrequencies, decode_many  # noqa: E402
from mirrorscope.sandbox import SandboxServer, build_real_world  # noqa: E402
from mirrorscope.sandbox.realpages import iter_corpus_pages  # noqa: E402
from mirrorscope.storage.store import Store  # noqa: E402

#: Pages per call of make_vectors, as the pipeline's batches (SKETCH_BATCH_SIZE).
BATCH = 32


def corpus_figures(runs: int) -> dict[str, float]:
    """Vector sizes against raw text and the plain layout, and the time to make them."""
    html_bytes, tokens = [], []
    for _, _, _, _, body in iter_corpus_pages():
        words = canonical_tokens(body)
        if words:
            html_bytes.append(len(body))
            tokens.append(words)
    times, made = [], []
    for _ in range(runs):
        ids: dict[str, int] = {}
        frequencies = DocumentFrequencies()

        def register(new: list[str]) -> list[int]:
            return list(range(len(ids), len(ids) + len(new)))

        started = time.perf_counter()
        made = [v for start in range(0, len(tokens), BATCH) for v in make_vectors(tokens[start : start + BATCH], ids, frequencies, register)]
        times.append(time.perf_counter() - started)
    sizes = np.array([len(blob) for _, blob in made])
    terms = np.array([n for n, _ in made])
    text = np.array([len(" ".join(words).encode("utf-8")) for words in tokens])
    return {
        "corpus_pages": len(tokens),
        "term_vector_bytes_per_page": float(sizes.mean()),
        "plain_bytes_per_page": float(8 * terms.mean()),
        "raw_text_bytes_per_page": float(text.mean()),
        "html_bytes_per_page": float(np.mean(html_bytes)),
        "terms_per_page": float(terms.mean()),
        "vector_ms_per_page": 1000 * statistics.median(times) / len(tokens),
    }


def crawl_real_world(tmp: str, max_pages: int) -> str:
    from realworld import crawl  # the crawl of benchmarks/realworld.py, with the defaults

    world = build_real_world(0)
    with SandboxServer(world, port=0) as server:
        world_dir = Path(tmp)
        (world_dir / "hosts").write_text(world.hosts_file_text())
        (world_dir / "seeds.txt").write_text("\n".join(world.seeds(server.port)) + "\n")
        db = f"sqlite:///{tmp}/store.db"
        seconds = crawl(world_dir, db, max_pages, (), timeout=3600)
    print(f"crawled the real-page world in {seconds:.0f} s", flush=True)
    return db


def cocluster_figures(db: str, runs: int) -> dict[str, float]:
    """The co-clustering of the store's vectors, as jobs.topics makes it."""
    store = Store(db, access="read")
    try:
        blobs = [bytes(data) for batch in store.term_vector_batches() for _, _, data in batch]
    finally:
        store.close()
    vectors = decode_many(blobs)
    matrix = page_term_matrix(vectors.rows, vectors.term_ids, vectors.tf(), len(vectors))
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = cocluster(matrix.rows, matrix.cols, matrix.values, matrix.shape)
        times.append(time.perf_counter() - started)
    print("loss per iteration (nats): " + " ".join(f"{x:.4f}" for x in result.loss), flush=True)
    return {
        "pages": matrix.shape[0], "terms": matrix.shape[1], "nonzeros": matrix.nonzeros,
        "stored_bytes_per_page": float(np.mean([len(b) for b in blobs])) if blobs else 0.0,
        "cocluster_s": statistics.median(times), "iterations": result.iterations,
        "loss_start": float(result.loss[0]), "loss_end": float(result.loss[-1]),
        "mutual_information": result.mutual_information,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed repetitions (medians)")
    parser.add_argument("--db", help="a store of the real-page world crawled before (default: crawl it now)")
    parser.add_argument("--max-pages", type=int, default=6000)
    args = parser.parse_args()
    load_start = os.getloadavg()
    figures = corpus_figures(args.runs)
    print("corpus: " + " ".join(f"{k}={v:.4g}" for k, v in figures.items()), flush=True)
    with tempfile.TemporaryDirectory(prefix="term-vectors-") as tmp:
        db = args.db or crawl_real_world(tmp, args.max_pages)
        store_figures = cocluster_figures(db, args.runs)
    print("store: " + " ".join(f"{k}={v:.4g}" for k, v in store_figures.items()), flush=True)
    load_end = os.getloadavg()
    figures |= store_figures
    figures.pop("corpus_pages")
    print(" ".join(f"{k}={v:.4g}" for k, v in figures.items()) + f" load_start={load_start[0]:.2f} load_end={load_end[0]:.2f}")


if __name__ == "__main__":
    main()
