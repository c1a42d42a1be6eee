"""The throughput model on a measured machine (estimate.Machine: benchmarks/validate_makespan.py's CPU figures)."""

from __future__ import annotations

import pytest

from triangulation.suite import estimate


def test_a_measured_machine_replaces_the_gpu_figures():
    machine = estimate.Machine(seconds_per_ref=2.0, start_s=60.0, saturation=16, cell_start_s=10.0, cores=2)
    cells = [estimate.CellWork(f"c{i}", "eval", ref) for i, ref in enumerate((5.0, 10.0, 15.0, 20.0))]
    # start, then 4 cells' start-ups sharing 2 cores (2 x 10 s), then the saturated server works through 2 x 50 s
    assert estimate.served_seconds(cells, size_b=0.135, gpus=1, in_flight=16, machine=machine) == pytest.approx(60 + 20 + 100)
    # one cell with 8 in flight half-fills a server that saturates at 16: its work takes twice as long
    one = estimate.served_seconds(cells[:1], size_b=0.135, gpus=1, in_flight=8, machine=machine)
    assert one == pytest.approx(60 + 10 + 2 * 10)
    gpu = estimate.served_seconds(cells, size_b=8, gpus=1)  # no machine: the GPU model as before
    assert gpu == pytest.approx(estimate.served_seconds(cells, size_b=8, gpus=1, machine=None))
    assert gpu != pytest.approx(60 + 20 + 100)
