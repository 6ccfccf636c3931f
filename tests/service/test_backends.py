"""The service on the batch's other backends: containers on a real Docker engine, a real Dask cluster.

Each test starts a real `torchgrader serve` on the demo course and grades one small submission, so the
path is the one a course uses (upload, queue, a warm worker of that backend, the result in the store).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.batch.test_runner import REF
from tests.docker.conftest import engine, image, leftover_containers  # noqa: F401 - the engine and image fixtures
from tests.helpers import DEMO_COURSE
from tests.service.live import LiveServer, multipart

DEMO = '[[assignments]]\nid = "demo"\n'


def _grade_one(server: LiveServer) -> dict:
    body, headers = multipart("mine.py", REF.encode())
    code, got = server.api("/api/submissions", "ann", body, headers)
    assert code == 202, got
    return server.wait_status(got["id"], "ann", ("graded", "error"))


def _no_torch_here(server: LiveServer) -> None:
    assert "libtorch" not in Path(f"/proc/{server.proc.pid}/maps").read_text()


@pytest.mark.docker
def test_the_service_grades_in_containers_with_no_network(tmp_path, image):  # noqa: F811
    server = LiveServer(tmp_path, DEMO, course=DEMO_COURSE, grading=f'backend = "docker"\ndocker_image = "{image}"\n')
    server.start()
    try:
        prefix = f"torchgrader-{server.proc.pid}-"
        names = leftover_containers(prefix)
        assert len(names) == 1, names  # one warm container for the one slot, started before /healthz said ready
        mode = subprocess.run(["docker", "inspect", "--format", "{{.HostConfig.NetworkMode}} {{.Config.User}}",
                               names[0]], capture_output=True, text=True, timeout=60).stdout.split()
        assert mode[0] == "none" and mode[1] not in ("", "0", "root", "0:0")
        final = _grade_one(server)
        assert final["status"] == "graded" and final["score"] == final["max_score"] > 0, final
        assert leftover_containers(prefix) == names  # the same container, kept warm
        _no_torch_here(server)
    finally:
        server.stop()
    assert leftover_containers(prefix) == []  # a stopped service leaves no container behind


def test_the_service_grades_on_a_dask_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    from autograder.batch.backends.dask import live_judges

    with (
        distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                 dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        server = LiveServer(tmp_path, DEMO, course=DEMO_COURSE,
                            grading=f'backend = "dask"\nscheduler = "{cluster.scheduler_address}"\n')
        server.start()
        try:
            assert sum(client.run(live_judges).values()) == 1  # ready means a judge started on the cluster
            assert not server.worker_pids()  # and none beside the service
            final = _grade_one(server)
            assert final["status"] == "graded" and final["score"] == final["max_score"] > 0, final
            assert sum(client.run(live_judges).values()) == 1  # the same judge, kept warm
            _no_torch_here(server)
        finally:
            server.stop()
        assert sum(client.run(live_judges).values()) == 0  # a stopped service leaves no judge on the cluster


@pytest.mark.docker
def test_without_its_image_the_service_is_not_ready_and_says_how_to_build_it(tmp_path, engine):  # noqa: F811
    import time

    from autograder.service.blobs import Blobs
    from autograder.service.config import Policy, ServiceConfig
    from autograder.service.grading import GradingPool
    from autograder.service.store import ServiceStore

    cfg = ServiceConfig(assignments=[Policy("demo")], course=DEMO_COURSE, backend="docker",
                        docker_image="torchgrader:no-such-image-here")
    pool = GradingPool(cfg, ServiceStore(tmp_path / "s.sqlite"), Blobs(tmp_path / "subs"), tmp_path / "logs")
    pool.start()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and "not there" not in pool.health()[1]:
            time.sleep(0.2)
        ready, why = pool.health()
    finally:
        pool.stop()
    assert not ready and "torchgrader:no-such-image-here is not there" in why and "docker build" in why, why
