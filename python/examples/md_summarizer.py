#!/usr/bin/env python3
"""The second article's Markdown summariser, as a Waystation Python agent.

    python3 python/examples/md_summarizer.py DIR --input FOLDER [--output FOLDER] [--publish-url URL] [--task ID]

Each Markdown file of --input is summarised into --output (default
DIR/outputs/<task>/) as a step of its own: one checkpoint per file. Then an
index is written and, with --publish-url, published exactly once: `POST` with
the header `Idempotency-Key: <task>:publish-index`, the intent saved before the
request and the outcome after. When a crash leaves the outcome unknown, the
resume asks the service (`GET <url>?key=<key>`: 200 published, 404 not) before
publishing again. Running it again resumes the task.
"""

from __future__ import annotations

import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import waystation  # noqa: E402
from waystation import PathOutsideRoot, PlannedStep, TaskContext, document_block, resolve_inside_root  # noqa: E402

SCHEMA = "https://json-schema.org/draft/2020-12/schema"
SUMMARY = {
    "$schema": SCHEMA,
    "type": "object",
    "properties": {"file": {"type": "string"}, "summary_path": {"type": "string"}, "summary": {"type": "string", "minLength": 1}},
    "required": ["file", "summary_path", "summary"],
    "additionalProperties": False,
}
PUBLISHED = {
    "$schema": SCHEMA,
    "type": "object",
    "properties": {"index_path": {"type": "string"}, "published": {}},
    "required": ["index_path", "published"],
    "additionalProperties": False,
}
MARKDOWN = re.compile(r"\.(md|markdown)$", re.I)
SUMMARY_INSTRUCTIONS = "You summarise Markdown documents: the title, then the key points in a few sentences taken from the text, then its sections."


def markdown_files(folder: str, prefix: str = "") -> list[str]:
    """Markdown files under a folder, relative, with forward slashes, in a stable order (by UTF-16 code unit, as the TypeScript agent sorts)."""
    out: list[str] = []
    entries = sorted(os.scandir(os.path.join(folder, prefix)), key=lambda e: e.name.encode("utf-16-be", "surrogatepass"))
    for e in entries:
        if e.name.startswith("."):
            continue
        rel = f"{prefix}/{e.name}" if prefix else e.name
        if e.is_dir(follow_symlinks=False):
            out += markdown_files(folder, rel)
        elif e.is_file() and MARKDOWN.search(e.name):
            out.append(rel)
    return out


def summary_name(rel: str) -> str:
    return MARKDOWN.sub("", rel) + ".summary.md"


def publication(answer: Any, key: str) -> dict[str, Any]:
    """What the step records of a publication: its id and key, whether from the POST's answer or a probe's."""
    return {"id": answer.get("id") if isinstance(answer, dict) else None, "key": key}


def probe_publish(effect: dict[str, Any], options: Any = None) -> dict[str, Any]:
    """Ask the publish service whether a publication with this key exists."""
    url = (effect.get("request") or {}).get("url")
    if not url:
        raise RuntimeError(f"effect {effect['id']} has no recorded URL to probe")
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.urlencode(urllib.parse.parse_qsl(parts.query) + [("key", effect["idempotency_key"])])
    probe_url = urllib.parse.urlunsplit(parts._replace(query=query))
    try:
        with urllib.request.urlopen(urllib.request.Request(probe_url, method="GET"), timeout=10) as res:
            return {"happened": True, "outcome": publication(json.loads(res.read() or b"null"), effect["idempotency_key"])}
    except urllib.error.HTTPError as err:
        if err.code == 404:
            return {"happened": False}
        raise RuntimeError(f"the publish service answered {err.code} to a probe of {parts.scheme}://{parts.netloc}{parts.path}") from None


def post_index(url: str, index: dict[str, Any], key: str) -> dict[str, Any]:
    body = json.dumps(index).encode("utf-8")
    req = urllib.request.Request(url, data=body, method="POST", headers={"content-type": "application/json", "idempotency-key": key})
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return publication(json.loads(res.read() or b"null"), key)
    except urllib.error.HTTPError as err:
        raise RuntimeError(f"the publish service answered {err.code} {err.reason}") from None


def recorded_path(p: str, root: str) -> str:
    """A path as the task records it: relative to the checkpoint directory when inside it, so a directory moved or
    copied elsewhere writes its summaries into itself; absolute outside it."""
    rel = os.path.relpath(os.path.abspath(p), os.path.abspath(root))
    if rel == os.curdir:
        return "."
    return p if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel) else rel.replace(os.sep, "/")


def output_folder(option: str, root: str) -> str:
    """The folder a recorded output option names, in the directory as it is now; an absolute one (tasks created before
    outputs were recorded relative) stays where it always was."""
    return os.path.join(os.path.abspath(root), option)


def output_dir(option: Optional[str], root: str, task_id: str, forked: bool) -> str:
    """The folder a task writes its summaries into, as electron/agents/md-summarizer.ts finds it: its own,
    DIR/outputs/<task>, unless it holds one. Tasks started before the default went unrecorded hold it as their option
    (`outputs/<task>`, absolute before outputs were recorded relative), and a fork carries its parent's options: in a
    fork, a folder `outputs/<other task>` of this directory is the default of the task it came from, and the fork
    writes its own, leaving that task's files alone."""
    own = os.path.join(os.path.abspath(root), "outputs", task_id)
    if not option:
        return own
    folder = os.path.normpath(output_folder(option, root))
    return own if forked and os.path.dirname(folder) == os.path.join(os.path.abspath(root), "outputs") else folder


def confined_path(root: str, requested: str, option: str) -> str:
    """`requested` inside `root`, or an error naming the option and why it is refused."""
    try:
        return resolve_inside_root(root, requested)
    except PathOutsideRoot as err:
        raise ValueError(
            f"the --{option} folder {requested!r} is refused: {err.why}; a task started from the inspector reads and "
            f"writes only inside {root}, so name a folder there. No task was created"
        ) from None


def resolve(options: dict[str, Any], env: dict[str, Any]) -> dict[str, Any]:
    # Options a page sent (the inspector) name folders inside the checkpoint directory only: ../, an absolute path or
    # a symbolic link out of it is refused before anything is read.
    if env.get("confined"):
        confined_path(env["root"], options["input"], "input")
        if options.get("output"):
            confined_path(env["root"], options["output"], "output")
    # Paths are fixed once, at creation, so a resume from another working directory finds the same files: the input
    # absolute, an output folder given as recorded_path records it. The default output is not recorded: it is the
    # task's own folder, DIR/outputs/<task>, found when the task runs, so a fork writes its own folder, never the
    # one of the task it was forked from (as the TypeScript agent does).
    resolved = {**options, "input": os.path.abspath(options["input"])}
    if options.get("output"):
        resolved["output"] = recorded_path(os.path.abspath(options["output"]), env["root"])
    else:
        resolved.pop("output", None)
    return resolved


def plan(options: dict[str, Any], env: dict[str, str]) -> list[PlannedStep]:
    try:
        found = markdown_files(options["input"])
    except OSError as err:
        raise RuntimeError(f"cannot read the input folder {options['input']}: {err.strerror}") from None
    return [PlannedStep(f"summarize:{f}", f"summarize {f}", SUMMARY) for f in found] + [PlannedStep("publish-index", "write and publish the index", PUBLISHED)]


def run(t: TaskContext) -> None:
    o = t.options
    # Resolved against the directory as it is now: a folder inside it moved or was copied with it.
    out_dir = output_dir(o.get("output"), t.root, t.task_id, bool(t.checkpoint.get("forked_from")))
    summaries: list[dict[str, Any]] = []
    t.phase("summarize")
    for step in [s for s in t.plan if s["id"].startswith("summarize:")]:
        rel = step["id"][len("summarize:") :]

        def summarise(rel: str = rel) -> dict[str, Any]:
            with open(os.path.join(o["input"], rel), encoding="utf-8") as f:
                text = f.read()
            # The prompts of electron/agents/md-summarizer.ts: the file whole, delimited, so the model (the offline one
            # too) summarises its content and nothing else.
            reply = t.complete(
                [
                    {"role": "system", "content": SUMMARY_INSTRUCTIONS},
                    {"role": "user", "content": f"Summarise the Markdown file {rel}.\n\n{document_block(rel, text)}"},
                ]
            )
            summary_path = os.path.join(out_dir, summary_name(rel))
            t.write_artifact(summary_path, f"# Summary of {rel}\n\n{reply.text}\n", type="summary")
            return {"file": rel, "summary_path": recorded_path(summary_path, t.root), "summary": reply.text}

        summaries.append(t.step(step["id"], summarise))

    t.phase("publish")

    def publish() -> dict[str, Any]:
        index = {"task_id": t.task_id, "files": [{"file": s["file"], "summary": s["summary"]} for s in summaries]}
        index_path = os.path.join(out_dir, "index.json")
        t.write_artifact(index_path, json.dumps(index, indent=2, ensure_ascii=False) + "\n", type="index")
        url = o.get("publish-url")
        if not url:
            t.log("no --publish-url given: the index was written but not published")
            return {"index_path": recorded_path(index_path, t.root), "published": None}
        published = t.effect(
            "http-publish",
            key=f"{t.task_id}:publish-index",
            request={"url": url, "files": len(index["files"])},
            perform=lambda key: post_index(url, index, key),
            probe=probe_publish,
        )
        return {"index_path": recorded_path(index_path, t.root), "published": published}

    t.step("publish-index", publish)


agent = waystation.Agent(
    name="md-summarizer",
    description="Summarise each Markdown file of --input into --output, then publish an index to --publish-url exactly once.",
    options={
        "type": "object",
        "properties": {
            "input": {"type": "string", "minLength": 1, "description": "the folder of Markdown files"},
            "output": {"type": "string", "minLength": 1, "description": "where summaries go (default DIR/outputs/<task>)"},
            "publish-url": {"type": "string", "minLength": 1, "description": "where the index is published"},
        },
        "required": ["input"],
    },
    resolve_options=resolve,
    goal=lambda o: f"summarise the Markdown files of {o['input']} and publish an index" + (f" to {o['publish-url']}" if o.get("publish-url") else ""),
    plan=plan,
    probes={"http-publish": probe_publish},
    run=run,
)

if __name__ == "__main__":
    sys.exit(waystation.main(agent))
