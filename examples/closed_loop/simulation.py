"""The closed loop (examples 09 and 11), the simulation: streams samples of y = sin(x) every step
(stream "sine") and calls the model the trainer publishes ("sine-model") every step once there is
one. It finds the server through SLIPSTREAM_ADDRESS or SSDB (which the launcher sets). Exits
non-zero unless the model it ran got newer and better, so the examples also run as tests.

Usage: python3 simulation.py [--steps N] [--pause SECONDS]"""
import argparse
import math
import sys
import time

import numpy as np

import slipstream

STREAM, MODEL, POINTS = "sine", "sine-model", 256


def version_of(client):
    meta = client.command(["AI.MODELGET", MODEL, "META"])
    fields = dict(zip(meta[::2], meta[1::2]))
    tag = fields.get(b"tag", fields.get("tag", b""))
    tag = tag.decode() if isinstance(tag, bytes) else tag
    return int(dict(item.split("=") for item in tag.split())["version"])


def run(steps, pause):
    """Runs the simulation; returns the (step, version, error) of the steps that ran a model."""
    rng = np.random.default_rng(1)
    probe = np.linspace(-3, 3, 61, dtype=np.float32).reshape(-1, 1)
    seen = []  # (step, version, error) of the steps that ran a model
    with slipstream.Client() as client, \
            slipstream.StreamWriter(STREAM, expected_groups=1) as writer:
        for step in range(steps):
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
                print(f"step {step:3d}: model version {version:3d}, mean squared error "
                      f"{error:.5f}", flush=True)
            time.sleep(pause)  # the simulation's own work
    return seen


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--pause", type=float, default=0.05)
    args = parser.parse_args()
    seen = run(args.steps, args.pause)
    versions = [v for _, v, _ in seen]
    ok = len(seen) >= 2 and versions == sorted(versions) and versions[-1] > versions[0] \
        and seen[-1][2] < seen[0][2]
    print("the model got newer and better" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
