"""The pre-flight probe: one throw-away sandbox set up for real before anything is graded.

It runs the steps every sandbox runs (namespaces, the private root with its own /proc,
resource limits, dropped privileges, the seccomp filter; the cgroup on the trusted side),
in a forked child that never runs anything else, so the answer is the kernel's own. A batch
whose every sandbox would die is stopped here, before its first result, with the step that
was refused, the kernel's reason and what to do.

Which steps are fatal and which are only reported is :data:`isolation.FATAL_STEPS` /
:data:`isolation.REPORTED_STEPS` (docker/README.md says the same for TAs).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field

from autograder.sandbox import isolation as iso

PROBE_UID = 65534  # as root, the probe's sandbox drops to `nobody` (real sandboxes: a uid of their own)


@dataclass
class Probe:
    """What one real set-up showed: a fatal refusal, namespaces refused (NOT isolated), and reported gaps."""

    refused: iso.SetupRefused | None = None  # a fatal step: no sandbox can start here
    unisolated: str | None = None  # the kernel refused the namespaces: sandboxes would run NOT isolated
    reported: dict[str, str] = field(default_factory=dict)  # seccomp, cgroup, loopback: refused but reported


def advice(step: str, reason: str, engine: str | None = None) -> str:
    """What to do about a refused step, for a person (the engine's flag inside a container)."""
    engine = iso.container_engine() if engine is None else engine
    if step == "/proc" and engine:
        flag = ("--security-opt unmask=ALL" if engine == "podman"
                else "--security-opt systempaths=unconfined")
        what = (f"inside {engine.capitalize()}, add `{flag}` to the `{engine} run` line (the engine's masked "
                "/proc paths make the kernel refuse a sandbox its own /proc; see docker/README.md)")
    elif step in ("namespaces", "private root") and engine:
        what = (f"inside {engine.capitalize()}, add `--security-opt seccomp=unconfined --security-opt "
                f"apparmor=unconfined` to the `{engine} run` line (see docker/README.md)")
    elif step == "namespaces":
        what = ("run as a user allowed to create user namespaces (`sysctl kernel.unprivileged_userns_clone=1`; "
                "Ubuntu 24.04: `sysctl kernel.apparmor_restrict_unprivileged_userns=0`), or as root")
    else:
        what = "run the grader where the kernel allows unprivileged user namespaces and mounts in them"
    # Only `torchgrader grade` has --allow-unisolated (check, try and validate never grade unisolated).
    return (f"{what}; or, for trusted submissions only, grade them with `torchgrader grade --allow-unisolated`, "
            "without isolation (student code can then read the hidden tests)")


def message(refused: iso.SetupRefused) -> str:
    """The person-facing sentence for a fatal refusal: the step, the kernel's reason, what to do."""
    return (f"the sandbox cannot start here: the kernel refused its {refused.step} "
            f"({refused.reason}), so nothing is graded. To fix it: {advice(refused.step, refused.reason)}")


def _address_space() -> int:
    """This process's address space in bytes (``VmSize``); 0 where it cannot be read."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def probe(memory_bytes: int = 256 * 2**20) -> Probe:
    """Set one sandbox up for real in a throw-away child; what the kernel refused."""
    from autograder.sandbox import seccomp
    from autograder.sandbox.cgroups import open_cgroups
    from autograder.sandbox.server import default_read_only

    out = Probe()
    groups = open_cgroups(tag=-os.getpid())
    if not groups.available:
        out.reported["cgroup"] = groups.reason
    else:
        try:
            groups.create(memory_bytes, 8).remove()
        except OSError as e:
            out.reported["cgroup"] = f"the kernel refused a cgroup ({e.strerror})"
        finally:
            groups.close()
    target = tempfile.mkdtemp(prefix="torchgrader-probe-")
    plan = iso.Plan(read_only=default_read_only(), root_dir=target)
    # The limit is on the address space, and the child starts with the prober's: a worker forked from the warm
    # server (sandbox/zygote.py) holds torch already, a worker started on its own not yet.
    memory_bytes += _address_space()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the keeper's part: namespaces; then init's part, in the new PID namespace
        try:
            os.close(r)
            root = os.geteuid() == 0
            ns = iso.enter_namespaces(want_userns=not root)
            if ns.get("namespaces") != "ok":
                os.write(w, json.dumps({"unisolated": ns.get("namespaces", "")}).encode())
                os._exit(0)
            init = os.fork()
            if init == 0:
                reply: dict = {"reported": {}} if ns.get("loopback") == "up" else {
                    "reported": {"loopback": ns.get("loopback", "down")}}
                try:
                    uid, gid = (PROBE_UID, PROBE_UID) if root else (os.getuid(), os.getgid())
                    iso.build_root(plan, iso.Limits(memory_bytes=memory_bytes), uid, gid)
                    with iso.step("resource limits"):
                        iso.set_limits(iso.Limits(memory_bytes=memory_bytes))
                    with iso.step("privileges"):
                        iso.drop_privileges(root, uid, gid)
                    try:
                        seccomp.install()
                    except OSError as e:
                        reply["reported"]["seccomp"] = f"the kernel refused the seccomp filter ({e})"
                except iso.SetupRefused as e:
                    reply = {"step": e.step, "reason": e.reason, "errno": e.errno}
                except Exception as e:  # noqa: BLE001 - any other failure of the set-up is a refusal too
                    reply = {"step": "sandbox set-up", "reason": f"{type(e).__name__}: {e}"}
                os.write(w, json.dumps(reply).encode())
                os._exit(0)
            os.close(w)
            os.waitpid(init, 0)
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    os.rmdir(target)
    got = json.loads(data or b'{"step": "sandbox set-up", "reason": "the probe died before it answered"}')
    if "unisolated" in got:
        out.unisolated = got["unisolated"]
    elif "step" in got:
        out.refused = iso.SetupRefused(got["step"], got["reason"], int(got.get("errno") or 0))
    else:
        out.reported.update(got.get("reported", {}))
    return out
