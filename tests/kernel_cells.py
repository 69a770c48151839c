"""Drive a real Jupyter kernel cell by cell, as a user at a notebook does; print what each cell
showed, as JSON. Run by the Python of the ``torch-cpu-kernel`` environment (tests/envs.py), which
has ipykernel and jupyter_client: the test suite's own venv has neither.

    $ python tests/kernel_cells.py FOLDER < cells.json > shown.json
    $ python tests/kernel_cells.py --notebook FILE.ipynb > shown.json

``cells.json`` is a list of steps: ``{"code": "..."}`` runs a cell in FOLDER (the notebook's
folder); ``"interrupt_after_s": 2`` interrupts the kernel that long after the cell started
(the notebook's stop button), ``"sigterm_after_s": 2`` sends the kernel process SIGTERM
instead; a step ``{"sigterm_idle_s": 2}`` waits that long with the kernel idle, sends it
SIGTERM and waits (30 s at most) for it to end (the last step). ``--notebook`` executes a
notebook file end to end with nbclient, as ``jupyter nbconvert --execute`` does, in the
notebook's folder. Each step (cell) gives ``{"text": what
it printed, "markdown": its rich display (text/markdown or text/html), "error": the
exception's name or null, "alive": whether the kernel still runs}``; with ``--notebook``,
``"empty_outputs"``: the outputs the saved notebook keeps that show nothing.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sys
import threading
import time
from typing import Any

from jupyter_client.manager import start_new_kernel

CELL_TIMEOUT_S = 120


def run_cell(manager: Any, client: Any, code: str) -> dict[str, Any]:
    """Run ``code`` and collect what the notebook would show, until the kernel is idle (or
    dead: ``error`` then says there was no answer)."""
    shown: dict[str, Any] = {"text": "", "markdown": "", "error": None}
    message_id = client.execute(code)
    deadline = time.monotonic() + CELL_TIMEOUT_S
    while True:
        try:
            message = client.get_iopub_msg(timeout=0.5)
        except queue.Empty:
            if not manager.is_alive() or time.monotonic() > deadline:
                shown["error"] = "no answer"
                return shown
            continue
        if message["parent_header"].get("msg_id") != message_id:
            continue
        kind, content = message["msg_type"], message["content"]
        if kind == "stream":
            shown["text"] += content["text"]
        elif kind in ("execute_result", "display_data"):
            data = content["data"]
            shown["markdown"] += data.get("text/markdown", "") + data.get("text/html", "")
            shown["text"] += data.get("text/plain", "") + "\n"
        elif kind == "error":
            shown["error"] = content["ename"]
            shown["text"] += f"{content['ename']}: {content['evalue']}\n"
        elif kind == "status" and content["execution_state"] == "idle":
            return shown


def execute_notebook(path: str) -> list[dict[str, Any]]:
    """Execute the notebook at ``path`` in its folder; what each code cell showed."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                   resources={"metadata": {"path": os.path.dirname(path)}}).execute()
    results = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        shown: dict[str, Any] = {"text": "", "markdown": "", "error": None, "alive": True,
                                 "empty_outputs": 0}
        for output in cell.outputs:
            if output.output_type in ("execute_result", "display_data") and not any(
                    value for value in output.data.values()):
                shown["empty_outputs"] += 1  # saved in the notebook, showing nothing
            if output.output_type == "stream":
                shown["text"] += output.text
            elif output.output_type in ("execute_result", "display_data"):
                shown["markdown"] += output.data.get("text/markdown", "")
                shown["text"] += output.data.get("text/plain", "") + "\n"
        results.append(shown)
    return results


def main() -> int:
    if sys.argv[1] == "--notebook":
        json.dump(execute_notebook(sys.argv[2]), sys.stdout)
        return 0
    folder = sys.argv[1]
    steps = json.load(sys.stdin)
    manager, client = start_new_kernel(kernel_name="python3", cwd=folder,
                                       startup_timeout=CELL_TIMEOUT_S)
    results = []
    try:
        for step in steps:
            if "sigterm_idle_s" in step:  # the kernel idle, between cells: SIGTERM, then wait
                time.sleep(step["sigterm_idle_s"])
                os.kill(manager.provisioner.process.pid, signal.SIGTERM)
                deadline = time.monotonic() + 30
                while manager.is_alive() and time.monotonic() < deadline:
                    time.sleep(0.2)
                results.append({"text": "", "markdown": "", "error": None,
                                "alive": manager.is_alive()})
                break
            timers = []
            if "interrupt_after_s" in step:
                timers.append(threading.Timer(step["interrupt_after_s"],
                                              manager.interrupt_kernel))
            if "sigterm_after_s" in step:
                pid = manager.provisioner.process.pid
                timers.append(threading.Timer(step["sigterm_after_s"], os.kill,
                                              (pid, signal.SIGTERM)))
            for timer in timers:
                timer.start()
            shown = run_cell(manager, client, step["code"])
            for timer in timers:
                timer.cancel()
            shown["alive"] = manager.is_alive()
            results.append(shown)
            if not shown["alive"]:
                break
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    json.dump(results, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
