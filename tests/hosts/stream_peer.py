"""A stream writer or reader that test_stream_hosts.py runs on a host of its own; it reports on
stdout, one JSON object a line, and the test judges what it reports.

    stream_peer.py write STREAM RANK WRITERS ADDRESS --steps N [--pause-after K] [options]
    stream_peer.py read STREAM GROUP RANK SIZE ADDRESS [options]

The component `meshes/E/x` is a ROWS x COLUMNS float64 field whose element (row, column) of step s
is `s * 1e6 + row * COLUMNS + column`. Writer r of w puts the chunks of CHUNK_ROWS rows that start
at rows CHUNK_ROWS * (r + w * j): the writers' chunks interleave, so a strategy that ignores host
names gives a reader chunks of both writers. Each chunk is 128 KiB, above the shared-memory
threshold, so a writer on the server's node puts every chunk through shared memory.

Writer lines: {"rank", "hostname"} once attached; {"wrote": step} per step; {"paused": step} after
--pause-after steps, then it waits for a line on stdin before the rest; {"closed": true}.
Reader lines: {"group", "rank", "hostname"} once joined; per step {"step": s, "pieces": [[source
rank, offset, extent, shared, sha256 of the bytes], ...], "bad": [offsets of pieces whose values
are wrong]}; {"skipped": step, "reason"} for a step the writers aborted; {"end": true} at the
end of the stream; {"waiting": message} when the server answered that no step came within
next_timeout_ms (the reader asks again); {"error": type, "message", "op", "seconds"} for any other
failure, the last line before it exits with status 1.
The password, if any, comes from SLIPSTREAM_PASSWORD.
"""

import argparse
import hashlib
import json
import socket
import sys
import time

import numpy as np
import slipstream

ROWS = 64
COLUMNS = 2048
CHUNK_ROWS = 8  # 8 x 2048 float64: 128 KiB a chunk
COMPONENT = "meshes/E/x"


def report(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def field(step):
    rows, columns = np.indices((ROWS, COLUMNS))
    return step * 1e6 + rows * COLUMNS + columns


def chunk_rows(rank, writers):
    """The first rows of writer `rank`'s chunks."""
    return list(range(CHUNK_ROWS * rank, ROWS, CHUNK_ROWS * writers))


def write(options):
    with slipstream.StreamWriter(options.stream, options.rank, options.writers,
                                 address=options.address, queue_limit=options.queue_limit,
                                 expected_groups=options.expected_groups,
                                 begin_timeout_ms=options.timeout_ms,
                                 command_timeout_ms=options.timeout_ms) as writer:
        report({"rank": options.rank, "hostname": socket.gethostname()})
        for step in range(options.steps):
            if step == options.pause_after:
                report({"paused": step})
                if not sys.stdin.readline():
                    raise RuntimeError("stdin closed while paused")
            writer.begin_step(step)
            whole = field(step)
            for first in chunk_rows(options.rank, options.writers):
                writer.put_chunk(COMPONENT, whole[first:first + CHUNK_ROWS], (ROWS, COLUMNS),
                                 (first, 0))
            if not writer.end_step():
                raise RuntimeError(f"step {step} aborted: {writer.last_abort_reason()}")
            report({"wrote": step})
    report({"closed": True})


class Failure(Exception):
    """A reader's call failed: `message` is its report line."""

    def __init__(self, op, started, error):
        super().__init__(str(error))
        self.message = {"error": type(error).__name__, "message": str(error), "op": op,
                        "seconds": time.monotonic() - started}


def read(options):
    reader = slipstream.StreamReader(options.stream, options.group, options.rank, options.size,
                                     address=options.address, strategy=options.strategy,
                                     policy=options.policy, next_timeout_ms=options.next_timeout_ms,
                                     command_timeout_ms=options.timeout_ms)
    report({"group": options.group, "rank": options.rank, "hostname": socket.gethostname()})
    with reader:
        while True:
            started, op = time.monotonic(), "next_step"
            try:
                step = reader.next_step()
                if step is None:
                    report({"end": True})
                    return
                if isinstance(step, slipstream.StreamSkipped):  # aborted by the writers
                    report({"skipped": step.step, "reason": step.reason})
                    continue
                op = "load"
                with step:
                    expected = field(step.number)
                    pieces, bad = [], []
                    for piece in step.load(COMPONENT):
                        if not np.array_equal(piece.array, expected[piece.slices]):
                            bad.append(list(piece.offset))
                        pieces.append([piece.source_rank, list(piece.offset), list(piece.extent),
                                       piece.shared,
                                       hashlib.sha256(piece.array.tobytes()).hexdigest()])
                report({"step": step.number, "pieces": pieces, "bad": bad})
            except slipstream.TimeoutError as error:
                # The server's own answer that no step came in time: the link works, ask again.
                if op == "next_step" and "within next_timeout_ms" in str(error):
                    report({"waiting": str(error)})
                    continue
                raise Failure(op, started, error) from error
            except slipstream.SlipstreamError as error:
                raise Failure(op, started, error) from error


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    roles = parser.add_subparsers(dest="role", required=True)
    writer = roles.add_parser("write")
    writer.add_argument("stream")
    writer.add_argument("rank", type=int)
    writer.add_argument("writers", type=int)
    writer.add_argument("address")
    writer.add_argument("--steps", type=int, required=True)
    writer.add_argument("--pause-after", type=int, default=-1)
    writer.add_argument("--queue-limit", type=int, default=2)
    writer.add_argument("--expected-groups", type=int, default=0)
    reader = roles.add_parser("read")
    reader.add_argument("stream")
    reader.add_argument("group")
    reader.add_argument("rank", type=int)
    reader.add_argument("size", type=int)
    reader.add_argument("address")
    reader.add_argument("--strategy", default="hostname_binpacking_slicedataset")
    reader.add_argument("--policy", default="block")
    reader.add_argument("--next-timeout-ms", type=int, default=30000)
    for role in (writer, reader):
        role.add_argument("--timeout-ms", type=int, default=30000,
                          help="command timeout (and the writers' begin timeout)")
    options = parser.parse_args()
    try:
        if options.role == "write":
            write(options)
        else:
            read(options)
    except Failure as failure:
        report(failure.message)
        return 1
    except Exception as error:  # anything else is reported too, so the test can say what
        report({"error": type(error).__name__, "message": str(error), "op": options.role,
                "seconds": 0.0})
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
