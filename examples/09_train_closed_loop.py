"""Example 09: the closed loop, by hand. A "simulation" publishes every step's samples of
y = sin(x) as a stream and, every step, calls the model the trainer publishes (if there is one
yet); the trainer, `slipstream train` in its own process, learns from the stream and publishes new
versions while the simulation runs. The simulation sees the version it ran go up and the model's
error go down. Example 11 runs the same parts (closed_loop/) from one experiment file.

Run: python3 09_train_closed_loop.py /path/to/slipstream   (SLIPSTREAM_ADDRESS names the server)
"""

import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import slipstream

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "closed_loop"))
import models  # noqa: E402  (closed_loop/models.py: the model and the sample builder)
import simulation  # noqa: E402  (closed_loop/simulation.py: the simulation's loop)


def main():
    slipstream_program = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    # The layout the launcher gives example 11: the trainer's folder beside "prepare".
    workdir = tempfile.mkdtemp(prefix="slipstream-example-09-")
    models.write(os.path.join(workdir, "prepare"))
    os.makedirs(os.path.join(workdir, "learner"))
    config = shutil.copy(os.path.join(here, "closed_loop", "train.toml"),
                         os.path.join(workdir, "learner"))
    trainer = subprocess.Popen([slipstream_program, "train", config],
                               cwd=os.path.join(workdir, "learner"))

    seen = simulation.run(steps=40, pause=0.0)
    status = trainer.wait(timeout=300)
    probe = np.linspace(-3, 3, 61, dtype=np.float32).reshape(-1, 1)
    with slipstream.Client() as client:
        (y,) = client.run_model_on(simulation.MODEL, [("probe", probe)], ["predicted"])
        final = float(np.mean((np.asarray(y) - np.sin(probe)) ** 2))
        final_version = simulation.version_of(client)
    print(f"after the run: model version {final_version}, mean squared error {final:.5f}")
    versions = [v for _, v, _ in seen]
    ok = (status == 0 and versions == sorted(versions) and final_version > (versions or [0])[0]
          and final < 0.01 and (not seen or final < seen[0][2]))
    print("all checks passed" if ok else "SOME CHECKS FAILED")
    shutil.rmtree(workdir, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
