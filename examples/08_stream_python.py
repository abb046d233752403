#!/usr/bin/env python3
"""Example 08 (Python streams): 2 simulation writer ranks publish 4 steps of a 2-D field
(meshes/E/x, each rank its own rows) and particle ids; a group of 2 readers (the "trainers")
takes each component in slabs (strategy slicedataset), checks every element, and the whole field
is reassembled from both readers' pieces.

In a real run every rank is a process of its own (an MPI rank, a trainer on another node); here
they are threads of one process, which works because every call that waits (begin_step,
next_step, load, ...) releases the GIL.

Usage: PYTHONPATH=<build>/bindings/python /usr/bin/python3 examples/08_stream_python.py [ADDRESS]
(default address: SLIPSTREAM_ADDRESS, then SSDB). Exits non-zero on any mismatch, so it also runs
as a test (example_08_stream_python).
"""

import sys
import threading

import numpy as np

import slipstream

STREAM = "example08.run"
WRITERS, READERS, STEPS = 2, 2, 4
NY, NX = 8, 5  # the field's global extent; writer r owns rows r*NY/2 .. (r+1)*NY/2 - 1
PARTICLES_PER_RANK = 3


def field(step):
    """The whole field at `step`: element [y, x] = 100 * step + 10 * y + x."""
    y, x = np.indices((NY, NX))
    return (100 * step + 10 * y + x).astype(np.float32)


def writer_rank(address, rank):
    rows = slice(rank * NY // WRITERS, (rank + 1) * NY // WRITERS)
    with slipstream.StreamWriter(STREAM, rank, WRITERS, address=address, queue_limit=2,
                                 expected_groups=1) as writer:  # keep steps until the group joins
        writer.set_stream_attribute("/", "software", "slipstream example 08")
        for step in range(STEPS):
            writer.begin_step(step)  # waits while the queue is full
            my_rows = field(step)[rows]  # a C-contiguous numpy array: sent without a copy
            writer.put_chunk("meshes/E/x", my_rows, global_extent=(NY, NX), offset=(rows.start, 0))
            ids = np.arange(PARTICLES_PER_RANK, dtype=np.int64) + rank * PARTICLES_PER_RANK
            writer.put_chunk("particles/e/id", ids, global_extent=(WRITERS * PARTICLES_PER_RANK,),
                             offset=(rank * PARTICLES_PER_RANK,))
            writer.set_attribute("/", "time", 0.5 * step)
            writer.set_attribute("meshes/E", "axisLabels", ["y", "x"])
            writer.set_attribute("meshes/E/x", "unitSI", 1.0)
            writer.end_step()  # the arrays are borrowed until here


def reader_rank(address, rank, results):
    ok = True
    with slipstream.StreamReader(STREAM, "trainers", rank, READERS, address=address,
                                 strategy="slicedataset", next_timeout_ms=30000) as reader:
        for step in reader:  # ends when both writers have closed
            with step:       # released on exit
                time = step.attributes["/"]["time"]
                mine = []
                for piece in step.load("meshes/E/x"):
                    box = piece.slices
                    ok &= bool(np.array_equal(piece.array, field(step.number)[box]))
                    mine.append((box, piece.array.copy()))  # keep a copy beyond release
                ids = [piece.array for piece in step.load("particles/e/id")]
                results.append((rank, step.number, time, mine, sum(len(i) for i in ids)))
    if not ok:
        results.append((rank, "MISMATCH"))


def main():
    address = sys.argv[1] if len(sys.argv) > 1 else None
    results = []
    threads = [threading.Thread(target=reader_rank, args=(address, r, results))
               for r in range(READERS)]
    threads += [threading.Thread(target=writer_rank, args=(address, r)) for r in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    ok = not any(r[1] == "MISMATCH" for r in results)
    print(f"{'step':>4} {'time':>5} {'reader':>6} {'rows':>8} {'particles':>9}")
    for step in range(STEPS):
        whole = np.full((NY, NX), np.nan, dtype=np.float32)
        for rank, number, time, mine, particles in sorted((r for r in results if r[1] == step), key=lambda r: r[0]):
            rows = ",".join(f"{box[0].start}-{box[0].stop - 1}" for box, _ in mine)
            print(f"{number:>4} {time:>5} {rank:>6} {rows:>8} {particles:>9}")
            for box, values in mine:
                whole[box] = values
        ok &= bool(np.array_equal(whole, field(step)))  # every element from exactly the slabs
    seen = sorted((r[0], r[1]) for r in results if r[1] != "MISMATCH")
    ok &= seen == [(rank, step) for rank in range(READERS) for step in range(STEPS)]
    print("all checks passed" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
