"""Example 09: the closed loop. A "simulation" publishes every step's samples of y = sin(x) as a
stream and, every step, calls the model the trainer publishes (if there is one yet); the trainer,
`slipstream train run.toml` in its own process, learns from the stream and publishes new
versions while the simulation runs. The simulation sees the version it ran go up and the model's
error go down.

Run: python3 09_train_closed_loop.py /path/to/slipstream   (SLIPSTREAM_ADDRESS names the server)
"""

import math
import os
import subprocess
import sys
import tempfile
from typing import Dict, List, Tuple

import numpy as np
import torch

import slipstream

STREAM, MODEL, STEPS, POINTS = "sine", "sine-model", 40, 256


class Mlp(torch.nn.Module):
    """The model to train: 1 -> 32 -> 1."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.net = torch.nn.Sequential(torch.nn.Linear(1, 32), torch.nn.Tanh(),
                                       torch.nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


class Samples(torch.nn.Module):
    """The sample builder: a step's "samples/xy" pieces ([n, 2] rows of x, y) -> (x, y)."""

    def forward(self, records: Dict[str, List[torch.Tensor]]) -> Tuple[torch.Tensor, torch.Tensor]:
        xy = torch.cat(records["samples/xy"])
        return xy[:, :1], xy[:, 1:]


CONFIG = f"""
[stream]
name = "{STREAM}"

[model]
file = "model.pt"
samples = "samples.pt"
publish_as = "{MODEL}"

[train]
learning_rate = 0.01
batch_size = 64
steps_after_end = 200

[replay]
policy = "reservoir"
max_samples = 4096

[publish]
every = 20

[metrics]
print_every_seconds = 1
"""


def version_of(client):
    meta = client.command(["AI.MODELGET", MODEL, "META"])
    fields = dict(zip(meta[::2], meta[1::2]))
    tag = fields.get(b"tag", fields.get("tag", b""))
    tag = tag.decode() if isinstance(tag, bytes) else tag
    return int(dict(item.split("=") for item in tag.split())["version"])


def main():
    slipstream_program = sys.argv[1]
    workdir = tempfile.mkdtemp(prefix="slipstream-example-09-")
    torch.jit.save(torch.jit.script(Mlp()), os.path.join(workdir, "model.pt"))
    torch.jit.save(torch.jit.script(Samples()), os.path.join(workdir, "samples.pt"))
    with open(os.path.join(workdir, "run.toml"), "w") as f:
        f.write(CONFIG)
    trainer = subprocess.Popen([slipstream_program, "train", os.path.join(workdir, "run.toml")])

    rng = np.random.default_rng(1)
    probe = np.linspace(-3, 3, 61, dtype=np.float32).reshape(-1, 1)
    seen = []  # (step, version, error) of the steps that ran a model
    with slipstream.Client() as client, \
            slipstream.StreamWriter(STREAM, expected_groups=1) as writer:
        for step in range(STEPS):
            x = rng.uniform(-math.pi, math.pi, POINTS).astype(np.float32)
            xy = np.stack([x, np.sin(x)], axis=1)
            writer.begin_step(step)
            writer.put_chunk("samples/xy", xy, xy.shape, (0, 0))
            writer.end_step()
            if client.model_exists(MODEL):  # the simulation's inference call, every step
                version = version_of(client)
                (y,) = client.run_model_on(MODEL, [("probe", probe)], ["predicted"])
                error = float(np.mean((np.asarray(y) - np.sin(probe)) ** 2))
                seen.append((step, version, error))
                print(f"simulation step {step:3d}: model version {version:3d}, "
                      f"mean squared error {error:.5f}", flush=True)
    status = trainer.wait(timeout=300)
    with slipstream.Client() as client:
        (y,) = client.run_model_on(MODEL, [("probe", probe)], ["predicted"])
        final = float(np.mean((np.asarray(y) - np.sin(probe)) ** 2))
        final_version = version_of(client)
    print(f"after the run: model version {final_version}, mean squared error {final:.5f}")
    versions = [v for _, v, _ in seen]
    ok = (status == 0 and versions == sorted(versions) and final_version > (versions or [0])[0]
          and final < 0.01 and (not seen or final < seen[0][2]))
    print("all checks passed" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
