"""Notebook kernels started as forks of a process that has already imported the third-party libraries.

Every page of the book runs in a fresh kernel, and a fresh Python spends seconds of CPU importing torch, PyG,
pandas, SciPy, scikit-learn and matplotlib before a page's first line does any work (``import torch_geometric``
alone 6-7 s on a 2-core machine; the smoke profile's 17 pages take 49 s instead of 177 s with preloaded kernels). With
``build_book(preload=True)`` a kernel server imports them once (:data:`PRELOAD`) and each kernel is a fork of it: a
new process with its own memory in which nothing has run yet, whose third-party modules are already loaded. The
book's own packages are not preloaded, so the library modules a page loads are still those it imports itself (the
build's manifest records them).

Jupyter starts this file as the kernel's command (:func:`kernel_server` writes the kernel spec): it asks the server
for a kernel over a Unix socket, hands the kernel its standard streams, passes interrupts on and exits with the
kernel; a kernel whose launcher is gone exits too. Linux only: elsewhere (Windows has no ``fork``; on macOS
forking a process that has loaded system frameworks is unsafe) :func:`kernel_server` yields the plain ``python3``
kernel. Only the standard library is imported at the top: the
launcher is a short-lived process per page.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import time

#: Modules the server imports before it forks kernels: third-party only (see the module docstring), and not
#: ipykernel, whose classes read the environment Jupyter gives each kernel when they are defined (e.g.
#: ``JPY_PARENT_PID``); a kernel imports it in 0.1 s once these are loaded.
PRELOAD = ("numpy", "pandas", "scipy.stats", "sklearn.linear_model", "sklearn.model_selection", "matplotlib.pyplot",
           "torch", "torch_geometric")
#: The kernel spec's name while a server runs.
NAME = "hpstrat-preloaded"
#: What ipykernel sets before matplotlib loads, so that figures show inline.
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"


def serve(path: str) -> None:
    """Import :data:`PRELOAD`, print ``ready`` and fork a kernel for each request on the Unix socket ``path``."""
    import importlib

    os.environ.setdefault("MPLBACKEND", INLINE_BACKEND)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]  # a kernel must not see this folder
    for name in PRELOAD:
        importlib.import_module(name)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the system reaps the kernels
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(path)
        listener.listen()
        print("ready", flush=True)
        while True:
            conn, _ = listener.accept()
            with conn:
                msg, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
                while chunk := conn.recv(1 << 16):
                    msg += chunk
                pid = os.fork()
                if pid == 0:  # the kernel keeps no end of the server's sockets (the launcher waits for EOF)
                    conn.close()
                    listener.close()
                    _run_kernel(json.loads(msg), fds)
                for fd in fds:
                    os.close(fd)
                conn.sendall(str(pid).encode())


def _run_kernel(request: dict, fds: list[int]) -> None:
    """In the forked child: the launcher's streams, directory and environment, then ipykernel; never returns."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        import threading

        threading.Thread(target=_exit_without, args=(request["launcher"],), daemon=True).start()
        sys.argv = ["ipykernel_launcher", *request["argv"]]
        from ipykernel import kernelapp

        kernelapp.launch_new_instance()
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
    except BaseException:  # noqa: BLE001 - the kernel's own failure, shown on its stderr
        import traceback

        traceback.print_exc()
    finally:  # a forked child leaves without the server's exit handlers
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _wait_until_gone(pid: int, interval: float) -> None:
    """Return once process ``pid`` has exited (checked every ``interval`` seconds; the server's children are
    reaped by the system, so an exited kernel leaves no zombie that would still answer)."""
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(interval)


def _exit_without(pid: int) -> None:
    """End the kernel once its launcher ``pid`` is gone (killed with the page's kernel manager)."""
    _wait_until_gone(pid, 1.0)
    os._exit(1)


def launch(path: str, argv: list[str]) -> int:
    """The kernel command: a kernel forked by the server at ``path``, with this process's streams, directory and
    environment; returns once the kernel has exited."""
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(path)
        request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "launcher": os.getpid()}
        socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
        conn.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := conn.recv(64):
            reply += chunk
    pid = int(reply)

    def forward(signum, _frame):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, forward)
    _wait_until_gone(pid, 0.05)
    return 0


@contextlib.contextmanager
def kernel_server(log=print):
    """Start a kernel server and a kernel spec for it on ``JUPYTER_PATH``; yields the kernel's name (the plain
    ``python3`` where the server cannot run); stops the server and removes the spec afterwards."""
    import select
    import shutil
    import subprocess
    import tempfile
    from pathlib import Path

    if not sys.platform.startswith("linux"):
        yield "python3"
        return
    tmp = Path(tempfile.mkdtemp(prefix="hpstrat-kernels-"))
    path = str(tmp / "server.sock")
    spec = tmp / "kernels" / NAME
    spec.mkdir(parents=True)
    script = os.path.abspath(__file__)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, script, "launch", path, "-f", "{connection_file}"],
        "display_name": "Python 3 (preloaded)", "language": "python", "interrupt_mode": "signal"}))
    proc = subprocess.Popen([sys.executable, script, "serve", path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            text=True)
    old = os.environ.get("JUPYTER_PATH")
    try:
        ready = select.select([proc.stdout], [], [], 300)[0] and proc.stdout.readline().strip() == "ready"
        if not ready:
            log("  the kernel server did not start: each page starts a plain kernel")
            yield "python3"
            return
        os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(tmp), old]))
        yield NAME
    finally:
        if old is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = old
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:  # launch SOCKET KERNEL-ARGUMENTS...
        sys.exit(launch(sys.argv[2], sys.argv[3:]))
