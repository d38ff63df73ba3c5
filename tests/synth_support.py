"""Helpers of the synthetic-data tests: answers in the teacher's formats, and a Stage 1 trajectory."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from webarena_gym.experiments.synth.store import JsonlStore, PageStore


def grounded(groups: list[list[int]]) -> str:
    return "\n".join(
        f'## Step {i}\nReasoning: why {i}\nDescription: # Element: x\ndo(action="Click", element="{i}")\n'
        f"Step: do part {i}\nActions: {json.dumps(g)}"
        for i, g in enumerate(groups, 1)
    )


def pair(i: int, query: str, example: str = "1") -> str:
    plan = "## Step 1\nReasoning: the page has a search box.\nStep: Search.\n## Step 2\nReasoning: r\nStep: Answer."
    return f"## Data Pair {i}\nUser Query:\n{query}\nInitial HTML State:\n{example}\nGlobal Plan:\n{plan}\n"


def teacher_script() -> dict:
    """Answers in every format the stages ask for, derived from each prompt (a teacher that complies)."""

    def asked_range(messages) -> tuple[int, int]:
        """The actions the latest round asks to cover (a re-ask's last message is the correction)."""
        for m in reversed(messages):
            found = re.search(r"every index from (\d+) to (\d+) exactly once", m["content"])
            if m["role"] == "user" and found:
                return int(found.group(1)), int(found.group(2))
        raise AssertionError("no action range in the prompt")

    def plan_annotator(messages):
        _, last = asked_range(messages)
        return grounded([list(range(last)), [last]] if last else [[0]])

    def replan_annotator(messages):
        first, last = asked_range(messages)
        return grounded([list(range(first, last + 1))])

    def cot(messages):
        text = messages[-1]["content"]
        if "## Action of This Round" in text:
            action = text.split("## Action of This Round\n", 1)[1].split("\n\n## Output Format", 1)[0]
            return f"I find the element on the page.\n[Start of Action]\n{action}\n[End of Action]"
        header = "## Plan Known to Work" if "## Plan Known to Work" in text else "## Updated Plan Known to Fit"
        plan = text.split(header + "\n", 1)[1].split("\n\n## Output Format", 1)[0]
        return f"I study the page and plan.\n[Start of Plan]\n{plan}\n[End of Plan]"

    def expander(messages):
        n = int(re.search(r"Write (\d+) new data pairs", messages[-1]["content"]).group(1))
        return "".join(pair(i, f"Find the forums about topic {i}.") for i in range(1, n + 1))

    return {
        "plan_annotator": plan_annotator,
        "replan_annotator": replan_annotator,
        "cot": cot,
        "expander": expander,
    }


def trajectory_fixture(
    run_dir: Path,
    n_steps: int,
    env_id: str = "webarena/local.203",
    site: str = "reddit",
    intent: str = 'List all forums whose names start with the letter "B".',
) -> None:
    """A kept Stage 1 trajectory (as Stage 1 writes it) so Stages 2 and 3 can run without a browser."""
    pages = PageStore(run_dir / "pages")
    steps = [
        {
            "index": k,
            "url": f"http://127.0.0.1/page{k}",
            "page": pages.put(f'<html><body><a id="{k}">{site} link {k} of {env_id}</a></body></html>'),
            "action": f'# Element: link {k}\ndo(action="Click", element="{k}")',
            "snippet": f'<a id="{k}">link {k}</a>',
        }
        for k in range(n_steps)
    ]
    steps[-1]["action"] = 'exit(message="books, boston")'
    record = {
        "key": f"stage1|fixture|{env_id}|0",
        "source": "seed",
        "study": "stage1",
        "episode": "episodes/fixture__a1",
        "env_id": env_id,
        "task_id": env_id,
        "site": site,
        "sites": [site],
        "intent": intent,
        "policy": "fixture",
        "model": "gpt-4o",
        "page_format": "html",
        "commands": ["Click", "exit"],
        "steps": steps,
        "answer": "books, boston",
        "reward": 1.0,
        "query": None,
        "outcome": {"method": "evaluator", "success": True, "score": 1.0, "reasoning": "", "teacher": None},
        "kept": True,
    }
    JsonlStore(run_dir / "stage1" / "trajectories.jsonl").append([record])


class TeacherServer:
    """An OpenAI-compatible chat server on 127.0.0.1 answering as a scripted teacher, for runs of the
    ``webarena-gym`` command in a subprocess: the request's model names the role (``--role-model
    ROLE=openai/ROLE``), ``answers[role](messages)`` is the reply, after ``delay`` seconds. ``roles``
    lists the role of every answered call."""

    def __init__(self, answers: dict, delay: float = 0.0) -> None:
        self.answers, self.delay, self.roles = answers, delay, []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server hook
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                role = body["model"].rpartition("/")[2]
                time.sleep(server.delay)
                text = server.answers[role](body["messages"])
                server.roles.append(role)
                reply = json.dumps(
                    {
                        "id": f"chatcmpl-{len(server.roles)}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": role,
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                        ],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> TeacherServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
