"""Issue 26.A1 for C and Fortran writers: a writer SIGKILLed between begin_step(1) and end_step(),
where begin_step(1) sent nothing because the end_step of step 0 had reserved step 1. The victim is
a compiled program (tests/capi/stream_killed_writer.c, tests/fortran/stream_killed_writer.f90)
attached as writer 1 of 2; this process is writer 0 (the survivor) and the reader. The server must
abort step 1: the reader is told it was skipped because of writer 1, the survivor's end_step
returns False, and the survivor's step 2 is delivered with the survivor's chunk.

CTest passes the victims' paths in SLIPSTREAM_C_KILLED_WRITER and SLIPSTREAM_FORTRAN_KILLED_WRITER;
a test whose variable is unset (a build without Fortran, or pytest run by hand) is skipped."""

import os
import select
import signal
import subprocess

import numpy as np
import pytest

import slipstream

VICTIMS = {"c": "SLIPSTREAM_C_KILLED_WRITER", "fortran": "SLIPSTREAM_FORTRAN_KILLED_WRITER"}
WAIT = 60.0  # seconds the victim may take to reach step 1 (a sanitizer build starts slowly)


def victim_program(language):
    variable = VICTIMS[language]
    path = os.environ.get(variable)
    if not path:
        pytest.skip(f"{variable} is not set: the {language} victim program was not built")
    if not os.access(path, os.X_OK):
        pytest.fail(f"{variable} names {path}, which is not an executable program")
    return path


def first_line(process, seconds):
    """The first line the process prints, or "" if it prints none within `seconds`."""
    ready, _, _ = select.select([process.stdout], [], [], seconds)
    return process.stdout.readline().strip() if ready else ""


@pytest.mark.parametrize("transport", ["tcp", "unix"])
@pytest.mark.parametrize("language", sorted(VICTIMS))
def test_a_writer_killed_inside_a_reserved_step_aborts_it(server, key, language, transport):
    program = victim_program(language)
    # Over the Unix socket the victim's chunks travel in shared memory (shared_memory_min_bytes 1).
    address = server.tcp_address if transport == "tcp" else server.unix_address
    stream = key("killed")
    reader = slipstream.StreamReader(stream, "g", address=address, next_timeout_ms=20000)
    survivor = slipstream.StreamWriter(stream, 0, 2, address=address, shared_memory_min_bytes=1)
    victim = subprocess.Popen([program, address, stream], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ))
    try:
        for step in (0, 1):
            survivor.begin_step(step)
            survivor.put_chunk("meshes/rho", np.full(4, float(step)), (8,), (0,))
            if step == 0:
                assert survivor.end_step()
        line = first_line(victim, WAIT)
        assert line == "inside 1", f"the {language} victim printed {line!r}, exit {victim.poll()}"
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=60)
        victim.stdout.close()
    assert victim.returncode == -signal.SIGKILL, "the victim ended before it was killed"

    shared = transport == "unix"
    first = reader.next_step()
    assert first.number == 0
    pieces = sorted(first.load("meshes/rho"), key=lambda piece: piece.offset[0])
    assert [(p.offset[0], p.source_rank, p.shared) for p in pieces] == [(0, 0, shared),
                                                                         (4, 1, shared)]
    np.testing.assert_array_equal(pieces[0].array, np.zeros(4))
    np.testing.assert_array_equal(pieces[1].array, np.ones(4))  # the victim's step 0
    first.release()
    skipped = reader.next_step()
    assert isinstance(skipped, slipstream.StreamSkipped), skipped
    assert skipped.step == 1 and "writer 1" in skipped.reason, skipped.reason
    assert survivor.end_step() is False  # told: step 1 was aborted
    assert "writer 1" in survivor.last_abort_reason()

    survivor.begin_step(2)
    survivor.put_chunk("meshes/rho", np.full(4, 2.0), (8,), (0,))
    assert survivor.end_step() is True
    after = reader.next_step()
    assert not isinstance(after, slipstream.StreamSkipped), after.reason
    assert after.number == 2
    pieces = after.load("meshes/rho")
    # Writer 1 is gone: the step is whole with the survivor's chunk.
    assert [(p.offset[0], p.source_rank, p.shared) for p in pieces] == [(0, 0, shared)]
    np.testing.assert_array_equal(pieces[0].array, np.full(4, 2.0))
    after.release()
    survivor.close()
    assert [step.number for step in reader] == []
    reader.close()
