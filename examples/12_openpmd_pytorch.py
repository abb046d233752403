"""Example 12: in-transit learning as openPMD-api users write it. The plasma simulation
(apps/pic, slipstream-pic) writes its steps through Slipstream's openPMD layer to the stream
"pic_example" (series "pic_example.sst"); this program reads that series with `openpmd_api`, as
an openPMD-api consumer reads an ADIOS2 SST stream (read_iterations(), load_chunk(), close()),
and trains a PyTorch model on every step as it arrives: the electric field E from the electron
phase-space density, the samples the simulation publishes in the mesh "phase_space_samples"
(one row a sample: the density perturbation, then E). The loss falls as the run goes on.

Run: python3 12_openpmd_pytorch.py /path/to/slipstream-pic   (SLIPSTREAM_ADDRESS names the server;
PYTHONPATH must reach openpmd_api: <build>/bindings/python, or the installed
<prefix>/lib/<arch>/slipstream/python)
"""

import json
import subprocess
import sys

import numpy as np
import openpmd_api as io
import torch

STEPS = 300         # simulation steps; every 4th is published: 76 iterations
EPOCHS = 4          # optimiser passes over each iteration's samples


def main():
    pic = subprocess.Popen([sys.argv[1], "--steps", str(STEPS), "--stream", "pic_example",
                            "--stream-every", "4", "--progress-every", str(STEPS)])
    torch.manual_seed(0)
    model = None
    losses = []
    # Every reading program is a group of its own; the simulation keeps its steps for one group.
    series = io.Series("pic_example.sst", io.Access.read_linear,
                       json.dumps({"slipstream": {"group": "pytorch"}}))
    for iteration in series.read_iterations():
        mesh = iteration.meshes["phase_space_samples"]
        samples = mesh[io.Mesh_Record_Component.SCALAR]
        rows = samples.load_chunk()  # filled when the iteration is closed
        inputs = int(mesh.get_attribute("input_columns"))
        iteration.close()            # the loads happen here; the step goes back to the writers
        x = torch.from_numpy(np.ascontiguousarray(rows[:, :inputs]))
        y = torch.from_numpy(np.ascontiguousarray(rows[:, inputs:]))
        # Gauss's law is linear: learn on rows scaled by the density perturbation's size.
        scale = x.pow(2).mean(dim=1, keepdim=True).sqrt().clamp_min(1e-30)
        x, y = x / scale, y / scale
        if model is None:
            model = torch.nn.Sequential(torch.nn.Linear(inputs, 128), torch.nn.GELU(),
                                        torch.nn.Linear(128, y.shape[1]))
            optimizer = torch.optim.Adam(model.parameters(), lr=0.002)
        for _ in range(EPOCHS):
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
        losses.append(loss.item())
        if len(losses) % 20 == 1:
            print(f"iteration {iteration.iteration_index:4d} (t = {iteration.time:6.2f}): "
                  f"{rows.shape[0]} samples, loss {losses[-1]:.3e}")
    series.close()
    if pic.wait(timeout=300) != 0:
        raise SystemExit("slipstream-pic failed")
    first, last = np.mean(losses[:5]), np.mean(losses[-5:])
    print(f"{len(losses)} iterations read through openpmd_api; loss {first:.3e} -> {last:.3e}")
    if len(losses) != STEPS // 4 + 1 or not last < 0.2 * first:
        raise SystemExit("the model did not learn from the stream")


if __name__ == "__main__":
    main()
