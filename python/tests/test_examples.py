"""The two example agents, run as a user runs them: `python3 python/examples/<name>.py DIR [options]`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from waystation import Store

from conftest import PYTHON_DIR

EXAMPLES = os.path.join(PYTHON_DIR, "examples")


def run_example(name, *args, env=None, timeout=60):
    full = {**os.environ, "WAYSTATION_OFFLINE_LATENCY_MS": "0", **(env or {})}
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args], capture_output=True, text=True, env=full, timeout=timeout)


def test_the_demo_fails_at_its_third_step_then_resumes_there(root):
    first = run_example("checkpoint_demo.py", root)
    assert first.returncode == 1, first.stderr
    assert "simulated failure" in first.stdout
    cp = Store(root).load("demo-task-001")
    assert [s["status"] for s in cp["plan"]] == ["done", "done", "failed", "pending"]
    second = run_example("checkpoint_demo.py", root, env={"SKIP_FAILURE": "1"})
    assert second.returncode == 0, second.stderr
    assert "analyse (analyse the requirement): already done" in second.stdout
    assert "check-errors (check for errors): started (attempt 2)" in second.stdout
    cp = Store(root).load("demo-task-001")
    assert cp["status"] == "done" and [s["attempts"] for s in cp["plan"]] == [1, 1, 2, 1]


def test_the_command_that_continues_a_run_names_its_directory_quoted_for_a_shell(tmp_path):
    spaced = str(tmp_path / "my dir ü")
    out = run_example("checkpoint_demo.py", spaced, env={"SKIP_FAILURE": ""})
    assert out.returncode == 1, out.stderr
    assert f"waystation resume '{spaced}' demo-task-001" in out.stdout
    assert "<DIR>" not in out.stdout


def test_the_demo_takes_a_task_id_and_describes_itself():
    out = run_example("checkpoint_demo.py", "--describe")
    assert out.returncode == 0
    assert json.loads(out.stdout)["name"] == "checkpoint-demo"


def test_bad_input_exits_2_with_nothing_written(root):
    out = run_example("md_summarizer.py", root, "--task", "m", "--input", os.path.join(root, "missing"))
    assert out.returncode == 2 and "cannot read the input folder" in out.stderr
    assert not os.path.exists(os.path.join(root, "m"))
    out = run_example("md_summarizer.py", root, "--task", "m")
    assert out.returncode == 2 and "input: is required" in out.stderr
    # A limit on automatic resumes that is not one is said as such, not blamed on the agent.
    for bad in ("-1", str(2**70)):
        out = run_example("checkpoint_demo.py", root, "--task", "m", "--mode", "auto", "--max-attempts", bad)
        assert out.returncode == 2 and f'--max-attempts must be a whole number from 0 to 9007199254740991, not "{bad}"' in out.stderr
    assert not os.path.exists(os.path.join(root, "m"))


class Publisher:
    """A publish service that applies a key once, answers repeats with the same record, and answers probes.
    `refuse` POSTs are answered 500 without applying anything."""

    def __init__(self):
        self.applied: dict[str, int] = {}
        self.records: dict[str, dict] = {}
        self.refuse = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                key = parse_qs(urlsplit(self.path).query).get("key", [""])[0]
                rec = owner.records.get(key)
                self.send_response(200 if rec else 404)
                self.end_headers()
                self.wfile.write(json.dumps(rec or {"error": "not found"}).encode())

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                key = self.headers["idempotency-key"]
                if owner.refuse > 0:
                    owner.refuse -= 1
                    self.send_response(500)
                    self.end_headers()
                    return
                if key not in owner.records:
                    owner.applied[key] = owner.applied.get(key, 0) + 1
                    owner.records[key] = {"id": f"pub-{len(owner.records) + 1}", "key": key, "body": body}
                self.send_response(201)
                self.end_headers()
                self.wfile.write(json.dumps({"id": owner.records[key]["id"]}).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/publish"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


@pytest.fixture
def publisher():
    p = Publisher()
    yield p
    p.close()


def make_input(base):
    src = os.path.join(base, "notes")
    os.makedirs(os.path.join(src, "deep"))
    for rel, text in {"b.md": "# Beta\n\nSecond.", "a.md": "# Alpha\n\nFirst one. Then more.", "deep/c.markdown": "Deep text!", ".hidden.md": "x", "skip.txt": "y"}.items():
        with open(os.path.join(src, rel), "w") as f:
            f.write(text)
    return src


def test_the_summariser_checkpoints_each_file_and_publishes_once(root, tmp_path, publisher):
    src = make_input(str(tmp_path))
    out = run_example("md_summarizer.py", root, "--task", "md", "--input", src, "--publish-url", publisher.url)
    assert out.returncode == 0, out.stderr + out.stdout
    cp = Store(root).load("md")
    assert [s["id"] for s in cp["plan"]] == ["summarize:a.md", "summarize:b.md", "summarize:deep/c.markdown", "publish-index"]
    assert publisher.applied == {"md:publish-index": 1}
    assert cp["side_effects"][0]["status"] == "done" and cp["side_effects"][0]["outcome"] == {"id": "pub-1", "key": "md:publish-index"}
    assert {a["path"] for a in cp["artifacts"]} == {"outputs/md/a.summary.md", "outputs/md/b.summary.md", "outputs/md/deep/c.summary.md", "outputs/md/index.json"}
    # The offline model summarised each file's content, as the TypeScript agent's does: its title, then its sentences.
    with open(os.path.join(root, "outputs", "md", "a.summary.md"), encoding="utf-8") as f:
        assert f.read() == "# Summary of a.md\n\nAlpha\n\nFirst one. Then more.\n"
    with open(os.path.join(root, "outputs", "md", "deep", "c.summary.md"), encoding="utf-8") as f:
        assert f.read() == "# Summary of deep/c.markdown\n\ndeep/c.markdown\n\nDeep text!\n"
    again = run_example("md_summarizer.py", root, "--task", "md")
    assert again.returncode == 0 and publisher.applied == {"md:publish-index": 1}


def test_the_summariser_writes_its_own_output_folder_where_the_directory_is(root, tmp_path, publisher):
    """The default output is the task's own folder, found when it runs (not recorded): a copied directory, resumed,
    writes into its own output folder, not the original's."""
    import shutil

    src = make_input(str(tmp_path))
    publisher.refuse = 1
    first = run_example("md_summarizer.py", root, "--task", "mv", "--input", src, "--publish-url", publisher.url)
    assert first.returncode == 1, first.stderr + first.stdout
    assert "output" not in Store(root).load("mv")["agent"]["options"]
    copy = str(tmp_path / "copy")
    shutil.copytree(root, copy)
    shutil.rmtree(os.path.join(root, "outputs"))
    again = run_example("md_summarizer.py", copy, "--task", "mv")
    assert again.returncode == 0, again.stderr + again.stdout
    with open(os.path.join(copy, "outputs", "mv", "index.json"), encoding="utf-8") as f:
        assert len(json.load(f)["files"]) == 3
    assert not os.path.exists(os.path.join(root, "outputs"))
    assert publisher.applied == {"mv:publish-index": 1}


def test_a_fork_of_a_summariser_task_that_recorded_its_default_output_writes_its_own(root, tmp_path, publisher):
    """Tasks started before the default went unrecorded hold `outputs/<task>`; a fork carries it, and writes its own
    folder all the same, leaving the files of the task it came from alone."""
    import copy
    import hashlib

    src = make_input(str(tmp_path))
    publisher.refuse = 1
    # The old default, recorded: `--output DIR/outputs/old` is recorded relative, as the old code recorded it.
    first = run_example("md_summarizer.py", root, "--task", "old", "--input", src, "--output", os.path.join(root, "outputs", "old"), "--publish-url", publisher.url)
    assert first.returncode == 1, first.stderr + first.stdout
    store = Store(root)
    parent = store.load("old")
    assert parent["agent"]["options"]["output"] == "outputs/old"

    def files(folder):
        return {os.path.relpath(os.path.join(d, n), folder): hashlib.sha256(open(os.path.join(d, n), "rb").read()).hexdigest() for d, _, names in os.walk(folder) for n in names}

    before = files(os.path.join(root, "outputs", "old"))
    # fork-task.ts: the parent's state under a new id, its step results copied into the fork's own blobs.
    origin = {"task_id": "old", "version": parent["version"]}
    state = copy.deepcopy(parent)
    state.pop("version")
    results = {s["id"]: store.read_blob("old", s.pop("result_ref")) for s in state["plan"] if s.get("result_ref")}
    for e in state["side_effects"]:
        e["asked_key"] = e["idempotency_key"].replace("old", "young")
    state.update(task_id="young", forked_from=origin, source={"kind": "fork", "actor": "ada", "forked_from": origin}, history={"count": 0, "head": None})
    state["recovery"]["stopped"] = None
    store.create(state, results=results)

    again = run_example("md_summarizer.py", root, "--task", "young")
    assert again.returncode == 0, again.stderr + again.stdout
    assert files(os.path.join(root, "outputs", "old")) == before
    with open(os.path.join(root, "outputs", "young", "index.json"), encoding="utf-8") as f:
        assert json.load(f)["task_id"] == "young"


def test_the_summariser_keeps_an_output_outside_the_directory_absolute(root, tmp_path, publisher):
    """An output folder outside the directory has no other name: a copy resumed writes there too, as tasks recorded
    with an absolute output always did."""
    import shutil

    src = make_input(str(tmp_path))
    out = str(tmp_path / "elsewhere")
    publisher.refuse = 1
    first = run_example("md_summarizer.py", root, "--task", "abs", "--input", src, "--output", out, "--publish-url", publisher.url)
    assert first.returncode == 1, first.stderr + first.stdout
    assert Store(root).load("abs")["agent"]["options"]["output"] == out
    copy = str(tmp_path / "copy")
    shutil.copytree(root, copy)
    os.remove(os.path.join(out, "index.json"))
    again = run_example("md_summarizer.py", copy, "--task", "abs")
    assert again.returncode == 0, again.stderr + again.stdout
    assert os.path.exists(os.path.join(out, "index.json"))
    assert not os.path.exists(os.path.join(copy, "outputs"))


@pytest.mark.parametrize("seed", range(8))
def test_the_summariser_publishes_exactly_once_whatever_the_kills(root, tmp_path, publisher, seed):
    """kill -9 at a point chosen by the seed, then resume until done: no file summarised twice after it was saved, one publication."""
    import random
    import time

    src = make_input(str(tmp_path))
    rng = random.Random(seed)
    env = {**os.environ, "WAYSTATION_OFFLINE_LATENCY_MS": "20"}
    args = [sys.executable, os.path.join(EXAMPLES, "md_summarizer.py"), root, "--task", "k", "--input", src, "--publish-url", publisher.url]
    for _ in range(3):
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.05, 0.4))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    for _ in range(5):
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
        if done.returncode == 0:
            break
    assert done.returncode == 0, done.stdout + done.stderr
    assert publisher.applied == {"k:publish-index": 1}
    cp = Store(root).load("k")
    assert cp["status"] == "done" and all(s["status"] == "done" for s in cp["plan"])


def test_the_summariser_started_from_the_inspector_reads_and_writes_inside_the_directory_only(root, tmp_path):
    """WAYSTATION_OPTIONS_CONFINED, as the host sets it for a task the inspector starts: a folder outside is refused."""
    outside = make_input(str(tmp_path))
    os.makedirs(root)
    inside = make_input(root)
    confined = {"WAYSTATION_OPTIONS_CONFINED": "1"}
    for args, message in [
        (["--input", outside], "--input folder"),
        (["--input", os.path.relpath(outside, root)], 'it climbs out with ".."'),
        (["--input", inside, "--output", str(tmp_path / "escape")], "--output folder"),
    ]:
        out = run_example("md_summarizer.py", root, "--task", "c", *args, env=confined)
        assert out.returncode == 2, out.stdout + out.stderr
        assert message in out.stderr and "a task started from the inspector reads and writes only inside" in out.stderr
        assert not os.path.exists(os.path.join(root, "c"))
    assert not os.path.exists(tmp_path / "escape")
    # Run by hand, the same folder outside is the person's own choice.
    out = run_example("md_summarizer.py", root, "--task", "by-hand", "--input", outside)
    assert out.returncode == 0, out.stdout + out.stderr
    out = run_example("md_summarizer.py", root, "--task", "c", "--input", inside, env=confined)
    assert out.returncode == 0, out.stdout + out.stderr


WRITER = """
import os, sys
sys.path.insert(0, {python!r})
import waystation
from waystation import PlannedStep

def publish():
    if not os.environ.get("PUBLISH_OK"):
        raise RuntimeError("the service is down")
    return "published"

def run(t):
    t.step("draft", lambda: "a text")
    t.step("publish", publish)

agent = waystation.Agent(name="writer", description="drafts, then publishes",
                         plan=[PlannedStep("draft", "draft"), PlannedStep("publish", "publish")], goal="write", run=run)
sys.exit(waystation.main(agent))
"""


def test_a_program_waystation_cannot_run_is_named_as_the_way_to_continue_its_task(root, tmp_path):
    """`waystation resume` refuses an agent it cannot load (neither built in, registered nor a module): the hint names
    the program that wrote the task instead, printed and saved alike."""
    program = tmp_path / "writer.py"
    program.write_text(WRITER.format(python=PYTHON_DIR))
    run = lambda *args, **env: subprocess.run([sys.executable, str(program), root, *args], capture_output=True, text=True,
                                              env={**os.environ, "WAYSTATION_OFFLINE_LATENCY_MS": "0", **env}, timeout=60, cwd=tmp_path)
    python = os.path.basename(sys.executable)
    out = run("--task", "w1")
    assert out.returncode == 1, out.stderr
    assert f"next: fix the cause, then: {python} {program} {root} --task w1" in out.stdout
    assert "waystation resume" not in out.stdout
    assert Store(root).load("w1")["resume_hint"].endswith(f"Fix the cause and run `{python} {program} <DIR> --task w1`, or set its result with `waystation edit <DIR> w1 publish --value JSON`")
    # Confirm mode: the failure's resume plan waits for approval, which is this program's too, with --approve.
    out = run("--task", "w2", "--mode", "confirm")
    assert out.returncode == 4, out.stdout + out.stderr
    assert f"{python} {program} {root} --task w2 --approve" in out.stdout
    out = run("--task", "w2", "--approve", PUBLISH_OK="1")
    assert out.returncode == 0, out.stdout + out.stderr
